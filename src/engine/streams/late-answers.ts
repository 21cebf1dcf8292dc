// Late answers a payment did not take (machines/events.ts LateAnswerUnapplied), on a stream beside
// the payment's: what the processor did for an abandoned call once the payment had moved on. Written
// once per attempt by whichever process finds it first (the call's own command, or the reconciler's
// second look); read by the audit, which reports each one for an operator.
import { streams, type UnappliedData } from "../../../machines/events.js";
import type { Clock } from "../../clock.js";
import { hashOf } from "../../events/chain.js";
import { newEvents } from "../../events/new-events.js";
import type { Ids } from "../../ids.js";
import { WrongExpectedRevision, type Appender, type RecordedEvent, type StreamReader } from "../../store/port.js";
import { eventMetadata, type CommandContext } from "../context.js";

export type { UnappliedData };

/**
 * Thrown where the late answer would have been recorded: the processor acted, the payment did not
 * take it, and the record for an operator is written (its stream named). Never answered as done.
 */
export class UnappliedLateAnswer extends Error {
  constructor(readonly data: UnappliedData) {
    super(
      `payment ${data.payment_id}: the processor answered attempt ${data.attempt_id} after it was abandoned, and the payment no longer takes its answer ` +
        `(${data.answer.map((e) => e.type).join(", ")}: ${data.reason}); recorded for an operator in ${streams.lateAnswers(data.payment_id)}`,
    );
    this.name = "UnappliedLateAnswer";
  }
}

/**
 * Thrown where the late answer would have been recorded while another call on the payment is in
 * flight: whether the payment takes it can only be decided once that call is closed (the
 * reconciler's second look tries again on its next pass).
 */
export class LateAnswerWaits extends Error {
  constructor(paymentId: string, attemptId: string, types: readonly string[], inFlight: string) {
    super(`payment ${paymentId}: the processor answered attempt ${attemptId} after it was abandoned, and its answer (${types.join(", ")}) could not be recorded yet: another call (${inFlight}) is in flight; the reconciler records it once that call is closed`);
    this.name = "LateAnswerWaits";
  }
}

export function createLateAnswers({ store, clock, ids }: { store: Appender & StreamReader; clock: Clock; ids: Ids }) {
  /** The record of an unapplied late answer, once per attempt (a second writer finds the first's). */
  async function recordUnapplied(data: UnappliedData, ctx: CommandContext): Promise<void> {
    const stream = streams.lateAnswers(data.payment_id);
    for (let conflicts = 0; ; conflicts++) {
      const recorded = await store.readStream(stream);
      if (recorded.some((e) => (e.data as UnappliedData).attempt_id === data.attempt_id)) return;
      const last = recorded.at(-1);
      const events = newEvents(stream, last ? hashOf(last) : null, [{ type: "LateAnswerUnapplied", version: 1, data }], eventMetadata({ ...ctx, late_answer_to: data.attempt_id }, clock, ids), () => ids.uuid());
      try {
        await store.append(stream, events, { expectedRevision: last ? last.revision : "no_stream" });
        return;
      } catch (error) {
        if (!(error instanceof WrongExpectedRevision) || conflicts >= 5) throw error;
      }
    }
  }

  /** A payment's unapplied late answers, oldest first. */
  const unappliedOf = (paymentId: string): Promise<RecordedEvent[]> => store.readStream(streams.lateAnswers(paymentId));

  return { recordUnapplied, unappliedOf };
}

export type LateAnswers = ReturnType<typeof createLateAnswers>;
