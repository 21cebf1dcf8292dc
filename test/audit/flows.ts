// Every flow of the payment machine driven through the engine with the simulators, on a manual
// clock and sequential ids: the streams the audit tests replay, verify and tamper with.
import { createEngine, type Engine } from "../../src/engine.js";
import { manualClock, type ManualClock } from "../../src/clock.js";
import { sequentialIds } from "../../src/ids.js";
import { createSimulators, type Simulators } from "../../src/processors/simulator.js";
import { cardFailingWith } from "../../src/processors/test-cards.js";
import type { EventStore, ReadModelStore } from "../../src/store/port.js";
import type { CreateIntentRequest } from "../../src/inputs.js";

export interface Flows {
  engine: Engine;
  clock: ManualClock;
  sim: Simulators;
  /** payment id by flow name */
  payments: Record<string, string>;
}

const A = "acct_a";
const B = "acct_b";

export async function runFlows(
  stores: { store?: EventStore; readModels?: ReadModelStore } = {},
  /** Runs once the accounts are open, before any terminal or payment (e.g. registers webhook endpoints). */
  afterAccounts?: (engine: Engine) => Promise<void>,
): Promise<Flows> {
  const clock = manualClock();
  const ids = sequentialIds();
  const sim = createSimulators({ clock, ids });
  const engine = createEngine({ ...stores, clock, ids, processors: sim });
  const payments: Record<string, string> = {};
  const step = () => clock.advance(1000);
  const ctx = (actor: string) => ({ actor });

  await engine.openAccount({ external_account_id: A, processor: "A" }, ctx("key_admin"));
  await engine.openAccount({ external_account_id: B, processor: "B" }, ctx("key_admin"));
  await afterAccounts?.(engine);
  const asyncTerminal = (await engine.registerTerminal({ external_account_id: A, terminal_type: "A_async", label: "front desk" })).terminal_id;
  const syncTerminal = (await engine.registerTerminal({ external_account_id: A, terminal_type: "A_sync" })).terminal_id;
  const reader = (await engine.registerTerminal({ external_account_id: B, terminal_type: "B_reader" })).terminal_id;

  const intent = async (name: string, input: Omit<CreateIntentRequest, "external_account_id" | "amount">, account = A) => {
    await step();
    const created = await engine.createIntent({ external_account_id: account, amount: "25.00", ...input }, ctx("key_1"));
    payments[name] = created.payment_id;
    return { payment_id: created.payment_id, external_account_id: account, client_secret: created.client_secret };
  };

  // async terminal, manual capture: authorize, present card, capture part, refund twice
  let p = await intent("terminal_manual", { payment_method_types: "card_present", capture_method: "manual" });
  await step();
  await engine.authorize({ ...ref(p), terminal_id: asyncTerminal }, ctx("key_1"));
  await step();
  await sim.terminal.presentCard(asyncTerminal);
  await step();
  await engine.capture({ ...ref(p), amount: "20.00" }, ctx("key_1"));
  await step();
  await engine.refund({ ...ref(p), amount: "5.00" }, ctx("key_2"));
  await step();
  await engine.refund(ref(p), ctx("key_2"));

  // sync terminal, automatic capture on the terminal with a tip; the card is saved for the customer
  p = await intent("terminal_sync_saves_card", { payment_method_types: "card_present", capture_method: "automatic", allow_saving_card: true, external_customer_id: "cus_1" });
  await step();
  const blocking = engine.authorize({ ...ref(p), terminal_id: syncTerminal }, ctx("key_1"));
  await clock.advance(0);
  await sim.terminal.presentCard(syncTerminal, undefined, { capture: "on_terminal", tip: "3" });
  await blocking;

  // async terminal, automatic capture requested on the terminal, settled later
  p = await intent("capture_requested", { payment_method_types: "card_present", capture_method: "automatic" });
  await step();
  await engine.authorize({ ...ref(p), terminal_id: asyncTerminal }, ctx("key_1"));
  await sim.terminal.presentCard(asyncTerminal, undefined, { capture: "requested" });
  await step();

  // shopper cancels (back to requires_payment_method), then a decline (error), then approved, then void
  p = await intent("retry_then_cancel", { payment_method_types: "card_present", capture_method: "manual" });
  for (const card of [cardFailingWith("USER_CANCEL").number, cardFailingWith("ONLINE_DECLINED").number, undefined]) {
    await step();
    await engine.authorize({ ...ref(p), terminal_id: asyncTerminal }, ctx("key_1"));
    await step();
    await sim.terminal.presentCard(asyncTerminal, card);
  }
  await step();
  await engine.cancel({ ...ref(p), cancellation_reason: "requested_by_customer" }, ctx("key_1"));

  // the shopper never comes: USER_TIMEOUT after 120 s
  p = await intent("shopper_timeout", { payment_method_types: "card_present", capture_method: "manual" });
  await engine.authorize({ ...ref(p), terminal_id: asyncTerminal }, ctx("key_1"));
  await clock.advance(121_000);

  // processor B reader collects through the client SDK, manual capture
  p = await intent("reader_manual", { payment_method_types: "card_present", capture_method: "manual" }, B);
  await step();
  await engine.collectPaymentMethod({ client_secret: p.client_secret!, terminal_id: reader }, ctx("sdk"));
  await step();
  await engine.authorize(ref(p), ctx("key_b"));
  await step();
  await engine.capture({ ...ref(p), amount: "25.00" }, ctx("key_b"));

  // processor B card form (not present), automatic capture, card saved after capture: the
  // collect processes the payment
  p = await intent("card_form_automatic", { payment_method_types: "card", capture_method: "automatic", allow_saving_card: true }, B);
  await step();
  await engine.collectPaymentMethod({ client_secret: p.client_secret! }, ctx("sdk"));
  await step();
  await engine.saveCard({ ...ref(p), external_customer_id: "cus_2" }, ctx("key_b"));

  // stored card charges: automatic (succeeded), manual then canceled, declined (error)
  p = await intent("stored_card_automatic", { payment_method_types: "card", capture_method: "automatic", payment_method_id: "pm_card_visa", external_customer_id: "cus_3" });
  await step();
  await engine.authorize(ref(p), ctx("key_1"));
  p = await intent("stored_card_manual_canceled", { payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_mastercard", external_customer_id: "cus_3" });
  await step();
  await engine.authorize(ref(p), ctx("key_1"));
  await step();
  await engine.cancel(ref(p), ctx("key_1"));
  p = await intent("stored_card_declined", { payment_method_types: "card", capture_method: "automatic", payment_method_id: "pm_card_declined", external_customer_id: "cus_3" });
  await step();
  await engine.authorize(ref(p), ctx("key_1"));

  // canceled before any card
  p = await intent("canceled_at_once", { payment_method_types: "card_present", capture_method: "manual" });
  await step();
  await engine.cancel(ref(p), ctx("key_1"));

  await engine.projections.catchUp();
  return { engine, clock, sim, payments };
}

const ref = (p: { payment_id: string; external_account_id: string }) => ({ payment_id: p.payment_id, external_account_id: p.external_account_id });

/** README's audit examples: one payment's timeline (as `cardflow audit` prints it) and its path. */
export async function auditExamples(): Promise<{ timeline: string; diagram: string }> {
  const { audit } = await import("../../src/audit/audit.js");
  const { diagram } = await import("../../src/audit/diagram.js");
  const { formatAudit } = await import("../../src/audit/format.js");
  const { engine, payments } = await runFlows();
  const id = payments.terminal_manual!;
  const report = await audit({ store: engine.store, readModels: engine.readModels }, id);
  const path = await engine.store.readStream(`payment-${id}`);
  return { timeline: formatAudit(report), diagram: await diagram({ path, title: `payment ${id}` }) };
}

/** README.md with the fenced block after each `<!-- audit-example:NAME ... -->` marker replaced. */
export function withReadmeExamples(readme: string, examples: { timeline: string; diagram: string }): string {
  return readme.replace(/(<!-- audit-example:(timeline|diagram)[^>]*-->\n```\w+\n)[\s\S]*?(```)/g, (_m, head: string, name: "timeline" | "diagram", tail: string) => head + examples[name] + tail);
}
