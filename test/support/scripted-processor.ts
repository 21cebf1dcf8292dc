// A processor whose next answers the test decides: lets a test make the engine append exactly
// the event it wants (path walking, model tests) without a simulator's own rules in between.
import type { Card } from "../../machines/events.js";
import type { LedgerEntry } from "../../src/processors/ledger.js";
import type { AuthorizationOutcome, CaptureOutcome, ProcessorPort, ProcessorReport, Processors } from "../../src/processors/port.js";

export interface ScriptedProcessors extends Processors {
  /** The answer of the next stored-card charge or collected-card authorization. */
  nextAuthorization: AuthorizationOutcome | undefined;
  nextCapture: CaptureOutcome["kind"];
  nextPaymentMethodId: string;
  nextCard: Card;
  /** What the processors were asked, in order, with the idempotency key (for tests that count effects). */
  calls: string[];
  /** Reports to the engine as a processor would (a terminal outcome, a settlement). */
  report: ProcessorReport;
  /** What each call answered, by idempotency key (lookup's answers), with the amount it was asked for. */
  ledger: Map<string, LedgerEntry>;
}

export const TEST_CARD: Card = {
  type: "card_present",
  brand: "visa",
  last_4: "4242",
  exp_month: "12",
  exp_year: 2031,
  cardholder_name: "TEST CARDHOLDER",
  funding: "credit",
};

export function scriptedProcessors(): ScriptedProcessors {
  let report: ProcessorReport = async () => {
    throw new Error("not connected");
  };
  let refunds = 0;
  const s: ScriptedProcessors = {
    nextAuthorization: undefined,
    nextCapture: "captured",
    nextPaymentMethodId: "pm_scripted",
    nextCard: TEST_CARD,
    calls: [],
    ledger: new Map(),
    report: (id, event) => report(id, event),
    get: () => port,
    connect(r) {
      report = r;
    },
  };
  const answer = (name: string, key: string, amount: string) => {
    s.calls.push(name);
    const outcome = s.nextAuthorization;
    if (!outcome) throw new Error(`scripted processor: no answer set for ${name}`);
    return record(key, { call: "authorize", outcome, amount }).outcome;
  };
  /** Answers once per key, like a processor: a repeated key gets the recorded answer. */
  const record = <R extends LedgerEntry>(key: string, recorded: R): R => {
    if (!s.ledger.has(key)) s.ledger.set(key, recorded);
    return s.ledger.get(key) as R;
  };
  const port: ProcessorPort = {
    chargeStoredCard: async ({ payment, key }) => answer("chargeStoredCard", key, payment.intent.amount),
    authorizeCollectedCard: async ({ payment, key }) => answer("authorizeCollectedCard", key, payment.intent.amount),
    startTerminalAuthorization: async ({ payment, key }) =>
      void (s.calls.push("startTerminalAuthorization"), record(key, { call: "start_terminal", outcome: null, amount: payment.intent.amount })),
    cancelTerminalAuthorization: async () => void s.calls.push("cancelTerminalAuthorization"),
    readCardFromClient: async ({ payment }) => ({ ...s.nextCard, type: payment.intent.payment_method_types === "card" ? "card_not_present" : "card_present" }),
    capture: async ({ amount, key }) => (s.calls.push(`capture ${key}`), record(key, { call: "capture", outcome: { kind: s.nextCapture }, amount }).outcome),
    void: async ({ key }) => void (s.calls.push("void"), record(key, { call: "void" })),
    refund: async ({ amount, key }) => {
      s.calls.push(`refund ${key}`);
      if (!s.ledger.has(key)) refunds++;
      return { refund_id: record(key, { call: "refund", refund_id: `re_${refunds}`, amount }).refund_id };
    },
    saveCard: async ({ key }) => (s.calls.push("saveCard"), { payment_method_id: record(key, { call: "save_card", payment_method_id: s.nextPaymentMethodId }).payment_method_id }),
    lookup: async (key) => s.ledger.get(key) ?? "never_received",
    retrieveStoredCard: async () => ({ ...TEST_CARD, type: "card_not_present" }),
  };
  return s;
}
