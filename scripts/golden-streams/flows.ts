// The flows of a golden store: every seed flow of spec §4.8 and what follows it (captures, refunds,
// cancels, declines and every §7 failure, an unknown outcome left by a crash and reconciled,
// saved cards, webhook endpoints and their deliveries), driven through the HTTP API (fastify's
// inject: the same routes, authentication and idempotency as a client gets) and, where a client
// has no route (the simulated shopper and clerk, a crash, the reconciler), through the library.
// Manual clock and sequential ids: what it writes depends only on the code that writes it.
import type { FastifyInstance } from "fastify";
import { cardFailingWith, amountFailingWith, testAmountIn } from "../../src/processors/test-cards.js";
import { LAST_ERROR_CODES } from "../../machines/failures.js";
import type { ManualClock } from "../../src/clock.js";
import type { Engine } from "../../src/engine.js";
import type { Simulators } from "../../src/processors/simulator.js";
import type { Webhooks } from "../../src/webhooks/index.js";

export interface FlowRig {
  app: FastifyInstance;
  engine: Engine;
  sims: Simulators;
  clock: ManualClock;
  webhooks: Webhooks;
  /** Makes the next capture's processor call "crash" after the processor captured (an unknown outcome). */
  crashNextCapture(): void;
}

export interface FlowsResult {
  /** Flow name -> payment. */
  payments: Record<string, { payment_id: string; external_account_id: string }>;
  /** Account -> API key (sandbox keys of this fixture, never used elsewhere). */
  keys: Record<string, string>;
  /** Account -> customers with cards on file. */
  customers: Record<string, string[]>;
}

export const ACCOUNTS = { A: "acct_a", B: "acct_b", JPY: "acct_jpy" } as const;

export async function runGoldenFlows(rig: FlowRig): Promise<FlowsResult> {
  const { app, engine, sims, clock } = rig;
  const { A, B, JPY } = ACCOUNTS;
  const payments: FlowsResult["payments"] = {};
  const keys: Record<string, string> = {};
  let idempotency = 0;

  async function call(method: "GET" | "POST" | "DELETE", account: string, url: string, body?: Record<string, unknown>) {
    const res = await app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${keys[account]}`, ...(method === "POST" ? { "idempotency-key": `golden-${++idempotency}` } : {}) },
      ...(body ? { payload: body } : {}),
    });
    if (res.statusCode >= 400) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
    return res.json() as Record<string, any>;
  }
  /** The client SDK's routes: authorised by the intent's client secret, no API key. */
  async function sdk(url: string, body: Record<string, unknown>) {
    await step();
    const res = await app.inject({ method: "POST", url, payload: body });
    if (res.statusCode >= 400) throw new Error(`POST ${url}: ${res.statusCode} ${res.body}`);
    return res.json() as Record<string, any>;
  }
  const step = () => clock.advance(1000);
  const intent = async (name: string, account: string, fields: Record<string, unknown>, version: "v1" | "v2" = "v2") => {
    console.error(`golden-streams: flow ${name}`);
    await step();
    const created = await call("POST", account, `/${version}/payment/intent`, { external_account_id: account, amount: "25.00", ...fields });
    payments[name] = { payment_id: created.payment_id, external_account_id: account };
    return { ref: { payment_id: created.payment_id as string, external_account_id: account }, client_secret: (created.client_secret ?? null) as string | null };
  };
  const post = async (account: string, path: string, body: Record<string, unknown>, version: "v1" | "v2" = "v2") => {
    await step();
    return call("POST", account, `/${version}${path}`, body);
  };

  // accounts (the CLI's openAccount), API keys, terminals (over HTTP), webhook endpoints
  await engine.openAccount({ external_account_id: A, processor: "A" }, { actor: "cli" });
  await engine.openAccount({ external_account_id: B, processor: "B" }, { actor: "cli" });
  await engine.openAccount({ external_account_id: JPY, processor: "A", currency: "JPY" }, { actor: "cli" });
  const { createApiKeys } = await import("../../src/api-keys.js");
  const apiKeys = createApiKeys(engine);
  for (const account of [A, B, JPY]) keys[account] = (await apiKeys.issue(account, "cli")).key;
  await call("POST", A, "/v2/webhook_endpoints", { external_account_id: A, url: "http://127.0.0.1:9/hooks/acct_a" });
  await call("POST", B, "/v2/webhook_endpoints", { external_account_id: B, url: "http://127.0.0.1:9/hooks/acct_b", event_types: ["payment_intent.succeeded", "customer_card.saved"] });
  // an endpoint whose receiver never answers 2xx: marked failing past the retry horizon
  await call("POST", A, "/v2/webhook_endpoints", { external_account_id: A, url: "http://127.0.0.1:9/hooks/down" });
  const removed = await call("POST", JPY, "/v2/webhook_endpoints", { external_account_id: JPY, url: "http://127.0.0.1:9/hooks/removed" });
  await call("DELETE", JPY, `/v2/webhook_endpoints/${removed.id}?external_account_id=${JPY}`);

  const terminal = async (account: string, terminal_type: string, label: string | null = null) =>
    (await call("POST", account, "/v2/hardware", { external_account_id: account, terminal_type, ...(label ? { label, serial_number: `SN-${label}` } : {}) })).terminal_id as string;
  const asyncTerminal = await terminal(A, "A_async", "front-desk");
  const syncTerminal = await terminal(A, "A_sync");
  const reader = await terminal(B, "B_reader", "reader-1");
  const jpyTerminal = await terminal(JPY, "A_async");

  // --- processor A asynchronous terminal --------------------------------------------------------
  // manual capture: authorize, card presented, partial capture, partial then full refund (/v1 routes)
  let p = await intent("async_terminal_manual_partial_capture_refunds", A, { payment_method_types: "card_present", capture_method: "manual" }, "v1");
  await post(A, "/payment/auth", { ...p.ref, terminal_id: asyncTerminal }, "v1");
  await step();
  await sims.terminal.presentCard(asyncTerminal);
  await post(A, "/payment/capture", { ...p.ref, amount: "20.00" }, "v1");
  await post(A, "/payment/refund", { ...p.ref, amount: "5.00", reason: "requested_by_customer" });
  await post(A, "/payment/refund", p.ref);

  // automatic capture requested on the terminal, settled later (capture_requested -> succeeded)
  p = await intent("async_terminal_capture_requested", A, { payment_method_types: "card_present", capture_method: "automatic" });
  await post(A, "/payment/auth", { ...p.ref, terminal_id: asyncTerminal });
  await sims.terminal.presentCard(asyncTerminal, undefined, { capture: "requested" });
  await step();
  await step();

  // every §7 code on one payment (each a retry of the one before), then approved, captured in full
  p = await intent("async_terminal_every_failure_code", A, { payment_method_types: "card_present", capture_method: "manual" });
  for (const code of LAST_ERROR_CODES) {
    await post(A, "/payment/auth", { ...p.ref, terminal_id: asyncTerminal });
    await step();
    if (code === "USER_TIMEOUT") await clock.advance(121_000); // the shopper never comes
    else await sims.terminal.presentCard(asyncTerminal, cardFailingWith(code).number);
  }
  await post(A, "/payment/auth", { ...p.ref, terminal_id: asyncTerminal });
  await sims.terminal.presentCard(asyncTerminal, "5555555555554444");
  await post(A, "/payment/capture", { ...p.ref, amount: "25.00" });

  // the clerk cancels on the terminal, then a void after authorization
  p = await intent("async_terminal_clerk_cancel_then_void", A, { payment_method_types: "card_present", capture_method: "manual" });
  await post(A, "/payment/auth", { ...p.ref, terminal_id: asyncTerminal });
  await sims.terminal.clerkCancel(asyncTerminal);
  await post(A, "/payment/auth", { ...p.ref, terminal_id: asyncTerminal });
  await sims.terminal.presentCard(asyncTerminal, "4000000000000010"); // AVS: address matches, postal code does not
  await post(A, "/payment/cancel", { ...p.ref, cancellation_reason: "requested_by_customer" });

  // the terminal is busy with another payment: the processor refuses, the attempt is abandoned
  const first = await intent("async_terminal_busy_first", A, { payment_method_types: "card_present", capture_method: "automatic" });
  await post(A, "/payment/auth", { ...first.ref, terminal_id: asyncTerminal });
  p = await intent("async_terminal_busy_refused", A, { payment_method_types: "card_present", capture_method: "automatic" });
  await step();
  const busy = await app.inject({ method: "POST", url: "/v2/payment/auth", headers: { authorization: `Bearer ${keys[A]}` }, payload: { ...p.ref, terminal_id: asyncTerminal } });
  if (busy.statusCode !== 409) throw new Error(`a busy terminal: expected 409, got ${busy.statusCode} ${busy.body}`);
  await sims.terminal.presentCard(asyncTerminal, undefined, { capture: "on_terminal" });

  // a test amount that declines (ONLINE_DECLINED by amount), in JPY (no minor units)
  p = await intent("async_terminal_jpy_declined_by_amount", JPY, { amount: testAmountIn(amountFailingWith("ONLINE_DECLINED"), "JPY"), payment_method_types: "card_present", capture_method: "automatic" });
  await post(JPY, "/payment/auth", { ...p.ref, terminal_id: jpyTerminal });
  await sims.terminal.presentCard(jpyTerminal);
  p = await intent("async_terminal_jpy_automatic", JPY, { amount: "1500", payment_method_types: "card_present", capture_method: "automatic" });
  await post(JPY, "/payment/auth", { ...p.ref, terminal_id: jpyTerminal });
  await sims.terminal.presentCard(jpyTerminal, undefined, { tip: "200" });

  // --- processor A synchronous terminal ---------------------------------------------------------
  // automatic capture on the terminal with a tip; the card is saved for the customer (/v1 save)
  p = await intent("sync_terminal_saves_card", A, { payment_method_types: "card_present", capture_method: "automatic", allow_saving_card: true, external_customer_id: "cus_sync" });
  await step();
  const blocking = call("POST", A, "/v2/payment/auth", { ...p.ref, terminal_id: syncTerminal });
  await sims.terminal.untilCollecting(syncTerminal);
  await sims.terminal.presentCard(syncTerminal, undefined, { capture: "on_terminal", tip: "3" });
  await blocking;
  await post(A, "/customer/card", { ...p.ref, external_customer_id: "cus_sync" }, "v1");
  // the blocking auth times out (USER_TIMEOUT after 120 s), then canceled
  p = await intent("sync_terminal_timeout_then_cancel", A, { payment_method_types: "card_present", capture_method: "manual" });
  await step();
  const waiting = call("POST", A, "/v2/payment/auth", { ...p.ref, terminal_id: syncTerminal });
  await sims.terminal.untilCollecting(syncTerminal);
  await clock.advance(121_000);
  await waiting;
  await post(A, "/payment/cancel", p.ref);

  // --- processor B reader and client SDK --------------------------------------------------------
  // the reader collects (client secret), the merchant processes, manual capture, full refund
  p = await intent("reader_manual_capture_refund", B, { payment_method_types: "card_present", capture_method: "manual" });
  await sdk("/v2/sdk/payment-method", { client_secret: p.client_secret, terminal_id: reader });
  await sdk("/v2/sdk/process-payment", { client_secret: p.client_secret });
  await post(B, "/payment/capture", { ...p.ref, amount: "25.00" });
  await post(B, "/payment/refund", p.ref);
  // the reader reads a declined card: error, then another card and an automatic capture
  p = await intent("reader_declined_then_approved", B, { payment_method_types: "card_present", capture_method: "automatic" });
  await sdk("/v2/sdk/payment-method", { client_secret: p.client_secret, terminal_id: reader, card_number: "4000000000000002" });
  await sdk("/v2/sdk/payment-method", { client_secret: p.client_secret, terminal_id: reader });
  // the card form (not present): the collect processes it; the card is saved after capture
  p = await intent("card_form_automatic_saves_card", B, { payment_method_types: "card", capture_method: "automatic", allow_saving_card: true });
  await sdk("/v2/sdk/payment-method", { client_secret: p.client_secret });
  await post(B, "/customer/card", { ...p.ref, external_customer_id: "cus_form" }, "v1");
  // the card form, manual capture, an expired card declined
  p = await intent("card_form_expired_card", B, { payment_method_types: "card", capture_method: "manual" });
  await sdk("/v2/sdk/payment-method", { client_secret: p.client_secret, card_number: "4000000000000069" });

  // --- stored-card charges ------------------------------------------------------------------------
  const saved = (await call("GET", B, `/v1/customer/card?external_account_id=${B}&external_customer_id=cus_form`)).data[0].payment_method_id as string;
  p = await intent("stored_card_saved_card_automatic_partial_refund", B, { payment_method_types: "card", capture_method: "automatic", payment_method_id: saved, external_customer_id: "cus_form" });
  await post(B, "/payment/auth", p.ref);
  await post(B, "/payment/refund", { ...p.ref, amount: "10.00" });
  p = await intent("stored_card_manual_partial_capture", A, { payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus_stored" });
  await post(A, "/payment/auth", p.ref);
  await post(A, "/payment/capture", { ...p.ref, amount: "12.50" });
  p = await intent("stored_card_manual_void", A, { payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_mastercard", external_customer_id: "cus_stored" });
  await post(A, "/payment/auth", p.ref);
  await post(A, "/payment/cancel", { ...p.ref, cancellation_reason: "duplicate" });
  p = await intent("stored_card_declined", A, { payment_method_types: "card", capture_method: "automatic", payment_method_id: "pm_card_declined", external_customer_id: "cus_stored" });
  await post(A, "/payment/auth", p.ref);
  p = await intent("stored_card_declined_once_then_retried", A, { payment_method_types: "card", capture_method: "automatic", payment_method_id: "pm_card_declined_once", external_customer_id: "cus_stored" });
  await post(A, "/payment/auth", p.ref);
  await post(A, "/payment/auth", p.ref);

  // --- an unknown outcome: the process "crashes" after the processor captured; the reconciler asks it
  p = await intent("stored_card_unknown_capture_reconciled", A, { payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus_stored" });
  await post(A, "/payment/auth", p.ref);
  await step();
  rig.crashNextCapture();
  await engine.capture({ ...p.ref, amount: "25.00" }, { actor: "key_crashed", request_id: 999_999 }).then(
    () => {
      throw new Error("the capture was expected to crash");
    },
    () => undefined,
  );
  await clock.advance(60_000);
  await engine.reconcile({ graceMs: 30_000 });

  // canceled before any card
  p = await intent("canceled_before_card", A, { payment_method_types: "card_present", capture_method: "manual", external_transaction_id: "order-77" });
  await post(A, "/payment/cancel", { ...p.ref, cancellation_reason: "abandoned" });

  return { payments, keys, customers: { [A]: ["cus_sync", "cus_stored"], [B]: ["cus_form"] } };
}
