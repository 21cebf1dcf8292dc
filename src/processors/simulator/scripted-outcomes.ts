// What the sandbox answers an authorization: test cards and test amounts (../test-cards.ts) select
// every outcome (a decline, a tip, a capture requested); with SANDBOX=off every card is approved.
import type { Authorization, Card } from "../../../machines/events.js";
import { ProcessorRefused } from "../../errors.js";
import type { Ids } from "../../ids.js";
import { Decimal, formatAmount } from "../../money.js";
import type { ProcessorSide } from "../processor-side.js";
import type { AuthorizationOutcome, PaymentView } from "../port.js";
import { testAmount, testCard, type TestCard, type TestOutcome } from "../test-cards.js";

/** How a terminal finishes a collection with automatic capture (spec §3's three rows). */
export type TerminalCapture = "separately" | "on_terminal" | "requested";

/** The test card of a card number, or the processor's refusal. */
export function testCardOf(number: string): TestCard {
  const found = testCard(number);
  if (!found) throw new ProcessorRefused(`card ${number.slice(-4)} is not a test card of the simulator`, "invalid_test_card", "card_number");
  return found;
}

/** The card a client SDK would read for this test card number. */
export const cardFor = (number: string, type: Card["type"]): Card => ({ ...testCardOf(number).card, type });

interface Deps {
  side: ProcessorSide;
  ids: Ids;
  scripted: boolean;
  captures: "immediate" | "requested";
  /** A capture requested now settles later (./settlements.ts). */
  settleLater: (paymentId: string, amount: string) => void;
}

export function createScriptedOutcomes({ side, ids, scripted, captures, settleLater }: Deps) {
  /** A declining card keeps its outcome; with an approving card a test amount selects one. */
  function testOutcome(payment: PaymentView, test: TestCard): TestOutcome {
    if (!scripted) return { approve: true };
    const key = `${payment.intent.payment_id}/${test.number}`;
    const attempt = (side.change<number>("attempts", key, (n) => (n ?? 0) + 1) ?? 0) + 1;
    if (!test.outcome.approve && !(test.outcome.firstAttemptOnly && attempt > 1)) return test.outcome;
    return testAmount(payment.intent.amount, payment.intent.currency) ?? { approve: true };
  }

  /** Whether a capture of this payment is requested first and settles later. */
  const requestsCapture = (payment: PaymentView) => {
    const selected = scripted ? testAmount(payment.intent.amount, payment.intent.currency) : undefined;
    return captures === "requested" || (selected?.approve === true && selected.captureRequested === true);
  };

  function authorization(payment: PaymentView, test: TestCard, type: Card["type"], tip = "0"): Authorization {
    const { currency, amount } = payment.intent;
    return {
      amount_authorized: formatAmount(new Decimal(amount).plus(tip), currency),
      tip_amount: formatAmount(tip, currency),
      donation_amount: formatAmount(0, currency),
      authorization_code: ids.id("auth").slice(-6).toUpperCase(),
      card: { ...test.card, type },
      avs_response_code: test.avs.code,
      avs_response_message: test.avs.message,
    };
  }

  /** The outcome of authorizing this test card for the payment (with automatic capture: captured, or requested). */
  function outcome(payment: PaymentView, test: TestCard, type: Card["type"], capture: TerminalCapture, tip?: string): AuthorizationOutcome {
    const selected = testOutcome(payment, test);
    if (!selected.approve) return { kind: "failed", last_error: selected.last_error, last_error_code: selected.last_error_code };
    const auth = authorization(payment, test, type, tip);
    if (payment.intent.capture_method === "manual" || capture === "separately") return { kind: "authorized", authorization: auth };
    if (capture === "requested" || requestsCapture(payment)) {
      settleLater(payment.intent.payment_id, auth.amount_authorized);
      return { kind: "capture_requested", authorization: auth };
    }
    return { kind: "captured", authorization: auth };
  }

  return { outcome, requestsCapture };
}

export type ScriptedOutcomes = ReturnType<typeof createScriptedOutcomes>;
