// The one pattern every processor call follows: decide -> attempt -> call -> outcome.
// The attempt event (its id is the call's idempotency key) is appended with the revision the
// decision was made on before the processor is called; the outcome event, naming the attempt,
// after. A crash or an unanswered call in between leaves the attempt open: the payment takes no
// other step until the reconciler (./reconcile.ts) learns the outcome from the processor.
import type { AttemptEvent } from "../../machines/events.js";
import { CardflowError, TransitionNotAllowed } from "../errors.js";
import type { RecordedOutcome } from "../processors/port.js";
import { WrongExpectedRevision } from "../store/port.js";
import type { Core } from "./core.js";
import { abandoned, OUTCOME_REFUSED, outcomeEvents } from "./outcomes.js";
import type { CommandContext, Loaded } from "./payment-streams.js";

export interface AttemptStep {
  /** The attempt event, given the new attempt id. */
  attempt(attempt_id: string): AttemptEvent;
  /** The processor call, with the attempt id as its idempotency key; resolves to what it answered. */
  call(key: string): Promise<RecordedOutcome>;
}

/** Fault injection for crash tests: called at each point of an attempt (a throw there is a crash). */
export type AttemptFault = (point: "after_attempt" | "after_call" | "after_outcome", attempt: AttemptEvent) => void;

/** Runs one processor call bracketed by its attempt and outcome events; returns the payment after the outcome. */
export async function attempt(core: Core, paymentId: string, loaded: Loaded, step: AttemptStep, ctx: CommandContext, command: string): Promise<Loaded> {
  const event = step.attempt(core.ids.id("att"));
  const attempt_id = event.data.attempt_id;
  // the HTTP idempotency record goes with the outcome: the answer is known only then
  const attempted = await core.payments.append(paymentId, loaded, [event], { ...ctx, idempotency: undefined }, command);
  core.fault?.("after_attempt", event);
  let recorded: RecordedOutcome;
  try {
    recorded = await step.call(attempt_id);
  } catch (error) {
    // a processor's CardflowError is its answer that it did nothing; anything else leaves the outcome unknown
    if (error instanceof CardflowError) await core.payments.append(paymentId, attempted, [abandoned(attempt_id, error.code)], { ...ctx, idempotency: undefined }, command);
    throw error;
  }
  core.fault?.("after_call", event);
  try {
    const after = await core.payments.append(paymentId, attempted, outcomeEvents(core.viewOf(attempted), recorded), ctx, command);
    core.fault?.("after_outcome", event);
    return after;
  } catch (error) {
    if (error instanceof TransitionNotAllowed) {
      // the processor's answer does not fit the payment (an authorization for another amount):
      // the attempt is closed rather than left blocking the payment, and the refusal is answered
      await core.payments.append(paymentId, attempted, [abandoned(attempt_id, OUTCOME_REFUSED)], { ...ctx, idempotency: undefined }, command);
      throw error;
    }
    if (!(error instanceof WrongExpectedRevision)) throw error;
    // another process's reconciler recorded the outcome first: the payment as it now stands
    const current = await core.payments.load(paymentId);
    if (current && current.snapshot.context.attempt?.data.attempt_id !== attempt_id) return current;
    throw error;
  }
}
