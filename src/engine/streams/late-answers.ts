// Late answers a payment did not take (machines/events.ts LateAnswerUnapplied), on a stream beside
// the payment's: what the processor did for an abandoned call once the payment had moved on. Written
// once per attempt by whichever process finds it first (the call's own command, or the reconciler's
// second look); the audit reports each one for an operator until the operator, having settled it
// with the processor, records that too (LateAnswerSettled, once).
import { streams, type UnappliedData } from "../../../machines/events.js";
import type { Clock } from "../../clock.js";
import { hashOf } from "../../events/chain.js";
import { newEvents, type DomainEventLike } from "../../events/new-events.js";
import { NotFound, ProcessorAnswerUnapplied } from "../../errors.js";
import type { Ids } from "../../ids.js";
import { parseInput, SettleLateAnswerInput, type SettleLateAnswerRequest } from "../../inputs.js";
import { WrongExpectedRevision, type Appender, type RecordedEvent, type StreamReader } from "../../store/port.js";
import { eventMetadata, type CommandContext } from "../context.js";

/** How every account of a late answer begins (errors, the audit's finding): the payment and the attempt it answered. */
export const answeredLate = (paymentId: string, attemptId: string) => `payment ${paymentId}: the processor answered attempt ${attemptId} after it was abandoned`;

/** The reason of an unapplied answer that came in time but did not fit the payment (not a late one). */
export const REFUSED_WHEN_ANSWERED = "refused when it came";

/** How an unapplied answer is told: a late one, or one the payment refused when it came. */
export const unappliedAnswer = ({ payment_id, attempt_id, reason }: Pick<UnappliedData, "payment_id" | "attempt_id" | "reason">) =>
  reason.startsWith(REFUSED_WHEN_ANSWERED) ? `payment ${payment_id}: the processor acted on attempt ${attempt_id}, but its answer did not fit the payment` : answeredLate(payment_id, attempt_id);

/**
 * The answer to a command whose call the processor answered with what the payment did not take
 * (it came in time, but did not fit): the processor acted, and what it did is recorded (`data`).
 * A retry under the command's Idempotency-Key gets it again, never a second call.
 */
export const answerUnapplied = (data: UnappliedData) =>
  new ProcessorAnswerUnapplied(
    `${unappliedAnswer(data)} (${data.answer.map((e) => e.type).join(", ")}: ${data.reason.replace(`${REFUSED_WHEN_ANSWERED}: `, "")}); the attempt is closed, and what the processor did is recorded for an operator in ${streams.lateAnswers(data.payment_id)}: settle it with the processor (cardflow settle-late-answer ${data.payment_id} ${data.attempt_id} --note …)`,
  );

/**
 * Thrown where the late answer would have been recorded: the processor acted, the payment did not
 * take it, and the record for an operator is written (its stream named). Never answered as done.
 */
export class UnappliedLateAnswer extends Error {
  constructor(readonly data: UnappliedData) {
    super(
      `${answeredLate(data.payment_id, data.attempt_id)}, and the payment no longer takes its answer ` +
        `(${data.answer.map((e) => e.type).join(", ")}: ${data.reason}); recorded for an operator in ${streams.lateAnswers(data.payment_id)}`,
    );
    this.name = "UnappliedLateAnswer";
  }
}

/**
 * Thrown where the late answer would have been recorded while another call on the payment is in
 * flight: whether the payment takes it can only be decided once that call is closed (the
 * reconciler's second look tries again on its next pass). Or while the same call, made again by a
 * retry, is still in flight (`inFlight` the attempt itself): that call's outcome records it.
 */
export class LateAnswerWaits extends Error {
  constructor(paymentId: string, attemptId: string, inFlight: string, types: readonly string[] = []) {
    super(
      inFlight === attemptId
        ? `${answeredLate(paymentId, attemptId)}, and a retry made the same call again, still in flight: that call's outcome records what the processor did`
        : `${answeredLate(paymentId, attemptId)}, and its answer (${types.join(", ")}) could not be recorded yet: another call (${inFlight}) is in flight; the reconciler records it once that call is closed`,
    );
    this.name = "LateAnswerWaits";
  }
}

/** The unapplied late answers of a payment's late-answers stream that no LateAnswerSettled settles yet. */
export function unsettled(events: readonly RecordedEvent[]): RecordedEvent[] {
  const settled = new Set(events.filter((e) => e.type === "LateAnswerSettled").map((e) => (e.data as { attempt_id: string }).attempt_id));
  return events.filter((e) => e.type === "LateAnswerUnapplied" && !settled.has((e.data as UnappliedData).attempt_id));
}

export function createLateAnswers({ store, clock, ids }: { store: Appender & StreamReader; clock: Clock; ids: Ids }) {
  /**
   * Appends what `next` decides from the stream's events (nothing: undefined), at the revision it
   * read; read again if another process appended first.
   */
  async function appendTo(paymentId: string, next: (recorded: RecordedEvent[]) => DomainEventLike | undefined, ctx: CommandContext): Promise<void> {
    const stream = streams.lateAnswers(paymentId);
    for (let conflicts = 0; ; conflicts++) {
      const recorded = await store.readStream(stream);
      const event = next(recorded);
      if (!event) return;
      const last = recorded.at(-1);
      try {
        await store.append(stream, newEvents(stream, last ? hashOf(last) : null, [event], eventMetadata(ctx, clock, ids), () => ids.uuid()), { expectedRevision: last ? last.revision : "no_stream" });
        return;
      } catch (error) {
        if (!(error instanceof WrongExpectedRevision) || conflicts >= 5) throw error;
      }
    }
  }
  const names = (attemptId: string) => (e: RecordedEvent) => (e.data as { attempt_id: string }).attempt_id === attemptId;

  return {
    /** The unapplied answer recorded for the attempt, if any (settled or not). */
    async unappliedFor(paymentId: string, attemptId: string): Promise<UnappliedData | undefined> {
      const recorded = await store.readStream(streams.lateAnswers(paymentId));
      return recorded.find((e) => e.type === "LateAnswerUnapplied" && names(attemptId)(e))?.data as UnappliedData | undefined;
    },

    /** The record of an unapplied late answer, once per attempt (a second writer finds the first's). */
    recordUnapplied: (data: UnappliedData, ctx: CommandContext) =>
      appendTo(data.payment_id, (recorded) => (recorded.some(names(data.attempt_id)) ? undefined : { type: "LateAnswerUnapplied", version: 1, data }), { ...ctx, late_answer_to: data.attempt_id }),

    /**
     * An operator settled it with the processor (`note`: what they did). Once: settling it again
     * changes nothing. NotFound when there is no such payment, or no unapplied late answer of the
     * payment names the attempt.
     */
    settle: async (raw: SettleLateAnswerRequest, ctx: CommandContext): Promise<void> => {
      const { payment_id, attempt_id, note } = parseInput(SettleLateAnswerInput, raw);
      // a mistyped payment id is named as such, not as an attempt it has no late answer for
      if ((await store.readStream(streams.payment(payment_id), { maxCount: 1 })).length === 0) throw new NotFound("payment", payment_id, "payment_id");
      return appendTo(
        payment_id,
        (recorded) => {
          const about = recorded.filter(names(attempt_id));
          if (!about.some((e) => e.type === "LateAnswerUnapplied")) throw new NotFound("unapplied late answer", attempt_id, "attempt_id", `for payment ${payment_id}`);
          return about.some((e) => e.type === "LateAnswerSettled") ? undefined : { type: "LateAnswerSettled", version: 1, data: { payment_id, attempt_id, note } };
        },
        ctx,
      );
    },
  };
}

export type LateAnswers = ReturnType<typeof createLateAnswers>;
