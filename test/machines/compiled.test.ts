// The compiled transition table (machines/compiled.ts) against the machine itself: random event
// sequences folded by XState's pure transition() and by the compiled fold give byte-equal states
// and contexts and the same "not allowed" answers, step by step. The compiler's own cases (each
// construct it folds or refuses, on small machines) are in ./compiler.test.ts.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { initialTransition, transition } from "xstate";
import type { Authorization, Card, PaymentEvent } from "../../machines/events.js";
import { LAST_ERROR_CODES } from "../../machines/failures.js";
import { applyPaymentEvent, initialPaymentSnapshot, type PaymentSnapshot } from "../../machines/fold.js";
import { paymentMachine } from "../../machines/payment.js";

const amount = fc.constantFrom("0.00", "5.00", "10.00", "12.00", "20.00", "25.00");
const card: fc.Arbitrary<Card> = fc.record({
  type: fc.constantFrom("card_present" as const, "card_not_present" as const),
  brand: fc.constant("visa"),
  last_4: fc.constantFrom("4242", "0002"),
  exp_month: fc.constant("12"),
  exp_year: fc.constant(2030),
  cardholder_name: fc.constantFrom(null, "TEST CARDHOLDER"),
  funding: fc.constant("credit" as const),
});
const authorization: fc.Arbitrary<Authorization> = fc.record({
  amount_authorized: amount,
  tip_amount: fc.constantFrom("0.00", "2.00"),
  donation_amount: fc.constantFrom("0.00", "0.00", "3.00"),
  authorization_code: fc.constant("A1B2C3"),
  card,
  avs_response_code: fc.constantFrom(null, 0),
  avs_response_message: fc.constantFrom(null, "match"),
});
const customer = fc.constantFrom("cus_1", "cus_2");
const ev = <T extends PaymentEvent["type"], D>(type: T, data: fc.Arbitrary<D>) => data.map((d) => ({ type, version: 1 as const, data: d }) as unknown as PaymentEvent);
/** Attempts and the outcomes that answer them draw from the same few ids, so they meet. */
const attemptId = fc.constantFrom("at_1", "at_1", "at_1", "at_2");
/** An outcome: naming an attempt, or none (a processor's own report, a stream from before attempts). */
const answering = <D extends object>(data: fc.Arbitrary<D>) =>
  fc.tuple(data, fc.option(attemptId, { nil: undefined, freq: 1 })).map(([d, attempt_id]) => (attempt_id ? { ...d, attempt_id } : d));

const eventsByType: Record<PaymentEvent["type"], fc.Arbitrary<PaymentEvent>> = {
  PaymentIntentCreated: ev(
    "PaymentIntentCreated",
    fc.record({
      payment_id: fc.constant("pi_1"),
      external_account_id: fc.constant("acct_1"),
      amount: fc.constantFrom("10.00", "20.00"),
      currency: fc.constantFrom("USD", "EUR"),
      payment_method_types: fc.constantFrom("card_present" as const, "card" as const),
      capture_method: fc.constantFrom("automatic" as const, "manual" as const),
      processor: fc.constantFrom("A" as const, "B" as const),
      external_transaction_id: fc.constantFrom(null, "tx_1", 7),
      external_customer_id: fc.constantFrom(null, "cus_1"),
      payment_method_id: fc.constantFrom(null, "pm_1"),
      stored_card: fc.option(card),
      allow_saving_card: fc.boolean(),
      client_secret: fc.constantFrom(null, "pi_1_secret_x"),
      date_created: fc.constant("2026-01-01T00:00:00.000Z"),
    }),
  ),
  TransactionReferenceGiven: ev("TransactionReferenceGiven", fc.record({ external_transaction_id: fc.constantFrom("tx_2", 8) })),
  TerminalAuthorizationStarted: ev("TerminalAuthorizationStarted", answering(fc.record({ terminal_id: fc.constant("tmr_1"), terminal_type: fc.constantFrom("A_async" as const, "A_sync" as const, "B_reader" as const) }))),
  PaymentMethodCollected: ev("PaymentMethodCollected", fc.record({ card, terminal_id: fc.constantFrom(null, "tmr_2") })),
  PaymentAuthorized: ev("PaymentAuthorized", answering(authorization)),
  AuthorizationFailed: ev("AuthorizationFailed", answering(fc.record({ last_error: fc.constant("failed"), last_error_code: fc.constantFrom(null, ...LAST_ERROR_CODES) }))),
  CaptureRequested: ev("CaptureRequested", answering(fc.record({ amount, authorization: fc.option(authorization) }))),
  PaymentCaptured: ev("PaymentCaptured", answering(fc.record({ amount, authorization: fc.option(authorization) }))),
  PaymentCanceled: ev("PaymentCanceled", answering(fc.record({ cancellation_reason: fc.constantFrom(null, "duplicate" as const) }))),
  PaymentRefunded: ev("PaymentRefunded", answering(fc.record({ refund_id: fc.constant("re_1"), amount, reason: fc.constantFrom(null, "asked") }))),
  CardSaved: ev(
    "CardSaved",
    answering(fc.record({ payment_method_id: fc.constant("pm_9"), external_account_id: fc.constant("acct_1"), external_customer_id: customer, card })),
  ),
  AuthorizationAttempted: ev("AuthorizationAttempted", fc.record({ attempt_id: attemptId, amount })),
  TerminalAuthorizationAttempted: ev(
    "TerminalAuthorizationAttempted",
    fc.record({ attempt_id: attemptId, terminal_id: fc.constant("tmr_1"), terminal_type: fc.constantFrom("A_async" as const, "A_sync" as const, "B_reader" as const) }),
  ),
  CaptureAttempted: ev("CaptureAttempted", fc.record({ attempt_id: attemptId, amount })),
  VoidAttempted: ev("VoidAttempted", fc.record({ attempt_id: attemptId, cancellation_reason: fc.constant(null) })),
  RefundAttempted: ev("RefundAttempted", fc.record({ attempt_id: attemptId, amount, reason: fc.constant(null) })),
  CardSaveAttempted: ev("CardSaveAttempted", fc.record({ attempt_id: attemptId, external_customer_id: customer })),
  AttemptAbandoned: ev("AttemptAbandoned", fc.record({ attempt_id: attemptId, reason: fc.constant("never_received") })),
};
const TYPES = Object.keys(eventsByType) as PaymentEvent["type"][];
/** One event of every type per step; the fold picks one, mostly among those the state accepts, to reach deep states. */
const step = fc.record({ pick: fc.nat(), guided: fc.nat({ max: 9 }).map((n) => n > 0), candidates: fc.record(eventsByType) });

type Outcome = { allowed: boolean; json: string } | { threw: string };
const attempt = (run: () => { allowed: boolean; json: string }): Outcome => {
  try {
    return run();
  } catch (error) {
    return { threw: (error as Error).message };
  }
};

describe("compiled payment machine", () => {
  it("folds random event sequences exactly as XState's transition() does", () => {
    const visited = new Set<string>();
    fc.assert(
      fc.property(fc.array(step, { maxLength: 24 }), (steps) => {
        let reference = initialTransition(paymentMachine)[0];
        let compiled: PaymentSnapshot = initialPaymentSnapshot;
        expect(JSON.stringify([compiled.value, compiled.context])).toBe(JSON.stringify([reference.value, reference.context]));
        for (const { pick, guided, candidates } of steps) {
          const accepted = Object.keys(paymentMachine.config.states?.[reference.value as string]?.on ?? {}) as PaymentEvent["type"][];
          const pool = guided && accepted.length ? accepted : TYPES;
          const event = candidates[pool[pick % pool.length]!];
          const expected = attempt(() => {
            const [next] = transition(paymentMachine, reference, event);
            const allowed = next !== reference;
            reference = next;
            return { allowed, json: JSON.stringify([next.value, next.context]) };
          });
          const actual = attempt(() => {
            const next = applyPaymentEvent(compiled, event);
            if (next) compiled = next;
            return { allowed: next !== null, json: JSON.stringify([compiled.value, compiled.context]) };
          });
          expect(actual).toEqual(expected);
          if ("threw" in expected) return;
          visited.add(String(reference.value));
        }
      }),
      // a fixed seed: the coverage check below must not depend on the draw (random seeds missed a state 1 run in ~10)
      { numRuns: 3000, seed: 20261123 },
    );
    // the sequences explored every state of the machine
    expect([...visited].sort()).toEqual(Object.keys(paymentMachine.config.states!).sort());
  });
});
