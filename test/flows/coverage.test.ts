// The simulators in the loop reach every transition of the payment machine: merchant calls, the
// client SDK and the shopper/clerk helpers only (no scripted processor answers), counted from the
// audit timeline against the transitions read from the machine's definition.
import { expect, test } from "vitest";
import { machineTransitions } from "../../machines/transitions.js";
import { audit } from "../../src/audit/audit.js";
import { paymentIdOf } from "../../src/audit/source.js";
import { A, B, rig } from "./harness.js";

test("every transition of the machine is reached through the simulators", async () => {
  // a crash right after an attempt is recorded (the processor never called): armed per command below
  let crashAfterAttempt = false;
  const fault = (point: string) => {
    if (point === "after_attempt" && crashAfterAttempt) {
      crashAfterAttempt = false;
      throw new Error("crash after the attempt");
    }
  };
  const r = await rig({ engine: { fault } });
  const { engine, sims, sdk, intent, clock } = r;
  const asyncTerminal = await r.terminal("A_async");
  const reader = await r.terminal("B_reader");
  const ref = (account: string, payment_id: string) => ({ external_account_id: account, payment_id });
  const stored = (payment_method_id: string, capture_method: "manual" | "automatic", amount = "10.00") =>
    intent(A, { payment_method_types: "card", payment_method_id, external_customer_id: "cus_1", capture_method, amount });
  const onTerminal = async (capture_method: "manual" | "automatic", amount = "10.00") => {
    const { payment_id } = await intent(A, { capture_method, amount });
    await engine.authorize({ ...ref(A, payment_id), terminal_id: asyncTerminal });
    return payment_id;
  };
  const authTwice = async (payment_id: string) => {
    await engine.authorize(ref(A, payment_id));
    await engine.authorize(ref(A, payment_id));
  };

  // requires_payment_method: canceled; stored-card outcomes (rpm and error classes of failure)
  await engine.cancel(ref(A, (await intent(A, { capture_method: "manual" })).payment_id));
  await engine.authorize(ref(A, (await stored("pm_card_visa", "manual")).payment_id));
  await engine.authorize(ref(A, (await stored("pm_card_visa", "automatic")).payment_id));
  await engine.authorize(ref(A, (await stored("pm_card_visa", "automatic", "99.13")).payment_id));
  await engine.authorize(ref(A, (await stored("pm_card_visa", "automatic", "99.09")).payment_id));
  // error: retried with the same card on file, which declines only the first attempt
  await authTwice((await stored("pm_card_declined", "manual")).payment_id);
  await authTwice((await stored("pm_card_declined_once", "manual")).payment_id);
  await authTwice((await stored("pm_card_declined_once", "automatic")).payment_id);
  await authTwice((await stored("pm_card_declined_once", "automatic", "99.13")).payment_id);
  await authTwice((await stored("pm_card_declined_once", "automatic", "99.09")).payment_id);
  const errorCanceled = (await stored("pm_card_declined", "manual")).payment_id;
  await engine.authorize(ref(A, errorCanceled));
  await engine.cancel(ref(A, errorCanceled));

  // payment_method_requested on the asynchronous terminal
  const manual = await onTerminal("manual");
  await sims.terminal.presentCard(asyncTerminal);
  await engine.capture({ ...ref(A, manual), amount: "4.00" });
  await engine.refund({ ...ref(A, manual), amount: "1.00" });
  await onTerminal("automatic");
  await sims.terminal.presentCard(asyncTerminal, undefined, { capture: "on_terminal" });
  await onTerminal("automatic");
  await sims.terminal.presentCard(asyncTerminal, undefined, { capture: "requested" });
  await onTerminal("manual");
  await sims.terminal.clerkCancel(asyncTerminal);
  await engine.cancel(ref(A, await onTerminal("manual")));
  const retried = await onTerminal("manual");
  await sims.terminal.presentCard(asyncTerminal, "4000000000000259");
  await engine.authorize({ ...ref(A, retried), terminal_id: asyncTerminal });
  await sims.terminal.presentCard(asyncTerminal, "4000000000000259"); // the same card, approved on retry
  await engine.cancel(ref(A, retried));

  // processor B: collect in rpm and in error; save before and after capture
  const form = await intent(B, { payment_method_types: "card", capture_method: "manual", allow_saving_card: true });
  // (a card form's collect also processes the payment)
  await sdk.collectPaymentMethod(form.client_secret!, { card_number: "4000000000000002" });
  await sdk.collectPaymentMethod(form.client_secret!);
  await engine.saveCard({ ...ref(B, form.payment_id), external_customer_id: "cus_b" });
  const present = await intent(B, { capture_method: "automatic", allow_saving_card: true });
  await sdk.collectPaymentMethod(present.client_secret!, { terminal_id: reader });
  await sdk.processPayment(present.client_secret!);
  await engine.saveCard({ ...ref(B, present.payment_id), external_customer_id: "cus_b" });

  // the caller's reference given with an authorization (spec §4.4): in rpm, in error, and for a card a reader collected
  await engine.authorize({ ...ref(A, (await stored("pm_card_visa", "manual")).payment_id), external_payment_id: "pos-1" });
  const declinedFirst = (await stored("pm_card_declined", "manual")).payment_id;
  await engine.authorize(ref(A, declinedFirst));
  await engine.authorize({ ...ref(A, declinedFirst), external_payment_id: "pos-2" });
  const onReader = await intent(B, { capture_method: "manual" });
  await sdk.collectPaymentMethod(onReader.client_secret!, { terminal_id: reader });
  await engine.authorize({ ...ref(B, onReader.payment_id), external_payment_id: "pos-3" });

  // requires_capture: capture requested (the capture-requested test amount), settled by the clock
  const capture = (await stored("pm_card_visa", "manual", "99.13")).payment_id;
  await engine.authorize(ref(A, capture));
  await engine.capture({ ...ref(A, capture), amount: "99.13" });
  await clock.advance(1_000);
  expect((await r.get(A, capture)).status).toBe("succeeded");

  // capture_requested on a synchronous terminal that saves the card: saved then (the token in the blocking answer), settled after
  const syncTerminal = await r.terminal("A_sync");
  const saving = await intent(A, { capture_method: "automatic", allow_saving_card: true, external_customer_id: "cus_cov" });
  const blocking = engine.authorize({ ...ref(A, saving.payment_id), terminal_id: syncTerminal });
  await sims.terminal.untilCollecting(syncTerminal);
  await sims.terminal.presentCard(syncTerminal, undefined, { capture: "requested" });
  expect(await blocking).toMatchObject({ status: "capture_requested", payment_method_id: expect.stringMatching(/^pm_/) });
  await clock.advance(1_000);
  expect((await r.get(A, saving.payment_id)).status).toBe("succeeded");

  // attempts a crash left open before the processor was called: the reconciler abandons them
  const crashing = async (command: Promise<unknown>) => {
    crashAfterAttempt = true;
    await expect(command).rejects.toThrow("crash after the attempt");
  };
  const inRpm = (await stored("pm_card_visa", "manual")).payment_id;
  await crashing(engine.authorize(ref(A, inRpm)));
  const inError = (await stored("pm_card_declined", "manual")).payment_id;
  await engine.authorize(ref(A, inError));
  await crashing(engine.authorize(ref(A, inError)));
  const inPmr = await intent(B, { payment_method_types: "card", capture_method: "manual" });
  await crashing(sdk.collectPaymentMethod(inPmr.client_secret!));
  const inCapture = (await stored("pm_card_visa", "manual")).payment_id;
  await engine.authorize(ref(A, inCapture));
  await crashing(engine.capture({ ...ref(A, inCapture), amount: "10.00" }));
  const inSucceeded = (await stored("pm_card_visa", "automatic")).payment_id;
  await engine.authorize(ref(A, inSucceeded));
  await crashing(engine.refund(ref(A, inSucceeded)));
  // a card save asked while the capture is requested (the customer given at creation, no automatic save)
  const inCaptureRequested = await intent(A, { capture_method: "automatic", external_customer_id: "cus_cov" });
  const blocked = engine.authorize({ ...ref(A, inCaptureRequested.payment_id), terminal_id: syncTerminal });
  await sims.terminal.untilCollecting(syncTerminal);
  await sims.terminal.presentCard(syncTerminal, undefined, { capture: "requested" });
  expect(await blocked).toMatchObject({ status: "capture_requested", payment_method_id: null });
  await crashing(engine.saveCard({ ...ref(A, inCaptureRequested.payment_id), external_customer_id: "cus_cov" }));
  const reconciled = await engine.reconcile({ graceMs: 0 });
  expect(reconciled.resolved.map((x) => [x.open, x.processor, x.appended.join()])).toEqual([
    ["AuthorizationAttempted", "never_received", "AttemptAbandoned"],
    ["AuthorizationAttempted", "never_received", "AttemptAbandoned"],
    ["AuthorizationAttempted", "never_received", "AttemptAbandoned"],
    ["CaptureAttempted", "never_received", "AttemptAbandoned"],
    ["RefundAttempted", "never_received", "AttemptAbandoned"],
    ["CardSaveAttempted", "never_received", "AttemptAbandoned"],
  ]);

  const taken = new Set<string>();
  const paymentIds = new Set((await engine.store.readAll()).map((e) => paymentIdOf(e.stream)).filter((id) => id !== null));
  for (const id of paymentIds) {
    const { timeline, findings } = await audit({ store: engine.store }, id);
    expect(findings).toEqual([]);
    for (const e of timeline) taken.add(`${e.status_before} --${e.type}--> ${e.status_after}`);
  }
  const transitions = machineTransitions().map((t) => t.id);
  expect(transitions.length).toBeGreaterThan(0);
  const missing = transitions.filter((id) => !taken.has(id));
  expect(missing).toEqual([]);
  // and nothing the machine does not define: every step the audit saw is one of its transitions
  expect([...taken].filter((id) => !transitions.includes(id))).toEqual([]);
  expect(taken.size).toBe(new Set(transitions).size);
});
