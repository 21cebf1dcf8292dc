// A processor whose next answers the test decides: lets a test make the engine append exactly
// the event it wants (path walking, model tests) without a simulator's own rules in between.
import type { Card } from "../../machines/events.js";
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
    report: (id, event) => report(id, event),
    get: () => port,
    connect(r) {
      report = r;
    },
  };
  const answer = (name: string) => {
    s.calls.push(name);
    const outcome = s.nextAuthorization;
    if (!outcome) throw new Error(`scripted processor: no answer set for ${name}`);
    return outcome;
  };
  const port: ProcessorPort = {
    chargeStoredCard: async () => answer("chargeStoredCard"),
    authorizeCollectedCard: async () => answer("authorizeCollectedCard"),
    startTerminalAuthorization: async () => void s.calls.push("startTerminalAuthorization"),
    cancelTerminalAuthorization: async () => void s.calls.push("cancelTerminalAuthorization"),
    readCardFromClient: async ({ payment }) => ({ ...s.nextCard, type: payment.intent.payment_method_types === "card" ? "card_not_present" : "card_present" }),
    capture: async ({ key }) => (s.calls.push(`capture ${key}`), { kind: s.nextCapture }),
    void: async () => void s.calls.push("void"),
    refund: async ({ key }) => (s.calls.push(`refund ${key}`), { refund_id: `re_${++refunds}` }),
    saveCard: async () => (s.calls.push("saveCard"), { payment_method_id: s.nextPaymentMethodId }),
    retrieveStoredCard: async () => ({ ...TEST_CARD, type: "card_not_present" }),
  };
  return s;
}
