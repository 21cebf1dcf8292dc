// Which processor call each attempt event stands for: one table, so what the processor is asked
// (and for how much) is always what the attempt records. The call gets the payment as it stood
// when the attempt was decided, and the attempt id as its idempotency key.
import type { AttemptEvent } from "../../../machines/events.js";
import type { z } from "zod";
import type { TerminalRecord } from "../../../projections/terminals.js";
import { CardflowError, ProcessorUnavailable } from "../../errors.js";
import { ANSWERS, checkedAnswer } from "../../processors/answers.js";
import type { PaymentView, ProcessorPort, Processors, RecordedOutcome } from "../../processors/port.js";

/** How soon a call that recorded nothing is worth trying again while its processor does not answer. */
const UNANSWERED_RETRY_AFTER_S = 5;

/**
 * A call that moves no money and is recorded nowhere (a card on file looked up, a card read, a
 * terminal stopped): a processor that does not answer is `503 processor_unavailable`, to be retried
 * as it was sent; its own refusal (a CardflowError) stands.
 */
export async function withoutAttempt<T>(processor: string, call: string, made: () => Promise<T>): Promise<T> {
  try {
    return await made();
  } catch (error) {
    if (error instanceof CardflowError) throw error;
    const why = error instanceof Error ? ` (${error.message})` : "";
    throw new ProcessorUnavailable(`processor ${processor} did not answer ${call}${why}; nothing was recorded: retry`, { cause: error, retryAfterSeconds: UNANSWERED_RETRY_AFTER_S });
  }
}

/** The processor of a payment: the one that collected its card, else its account's. */
export const processorNameOf = (payment: PaymentView) => payment.processor ?? payment.intent.processor;
export const processorOf = (processors: Processors, payment: PaymentView): ProcessorPort => processors.get(processorNameOf(payment));

/**
 * Makes the call `attempt` stands for; resolves to what the processor answered, checked against the
 * port's types (ANSWERS): a malformed answer throws a plain Error, an unknown outcome (503, the
 * attempt left open for the reconciler), never an event.
 */
export async function callProcessor(processors: Processors, payment: PaymentView, attempt: AttemptEvent, terminal?: TerminalRecord): Promise<RecordedOutcome> {
  const key = attempt.data.attempt_id;
  const name = processorNameOf(payment);
  const port = processorOf(processors, payment);
  const checked = <T>(schema: z.ZodType<T>, call: string, answer: unknown) => checkedAnswer(schema, answer, name, call);
  switch (attempt.type) {
    case "AuthorizationAttempted":
      // a card on file is charged; a card the processor B client SDK collected is authorized
      return payment.intent.payment_method_id !== null
        ? { call: "authorize", outcome: checked(ANSWERS.Outcome, "chargeStoredCard", await port.chargeStoredCard({ payment, key })) }
        : { call: "authorize", outcome: checked(ANSWERS.Outcome, "authorizeCollectedCard", await port.authorizeCollectedCard({ payment, key })) };
    case "TerminalAuthorizationAttempted":
      // terminals that authorize (A_async, A_sync) are processor A's; the call returns nothing (its outcome is reported)
      if (!terminal) throw new Error(`attempt ${key}: a terminal authorization needs its terminal`);
      await processors.get("A").startTerminalAuthorization({ payment, terminal, key });
      return { call: "start_terminal", outcome: null };
    case "CaptureAttempted":
      return { call: "capture", outcome: checked(ANSWERS.CaptureOutcome, "capture", await port.capture({ payment, amount: attempt.data.amount, key })) };
    case "VoidAttempted":
      // returns nothing: whatever it resolves to is not an answer
      await port.void({ payment, key });
      return { call: "void" };
    case "RefundAttempted":
      return { call: "refund", ...checked(ANSWERS.Refund, "refund", await port.refund({ payment, amount: attempt.data.amount, key })) };
    case "CardSaveAttempted":
      return { call: "save_card", ...checked(ANSWERS.SavedCard, "saveCard", await port.saveCard({ payment, external_customer_id: attempt.data.external_customer_id, key })) };
  }
}

/**
 * What the payment's processor recorded for the call with `key` (ProcessorPort.lookup), checked like
 * a call's answer: a malformed one throws a plain Error naming it (nothing recorded; the call stays open).
 */
export async function lookupAnswer(processors: Processors, payment: PaymentView, key: string): Promise<RecordedOutcome | "never_received"> {
  const answer = await processorOf(processors, payment).lookup(key);
  return answer === "never_received" ? answer : checkedAnswer(ANSWERS.Recorded, answer, processorNameOf(payment), `lookup(${key})`);
}
