// The one pipeline every payment command runs, in fixed steps:
//
//   validate (the handler parses its input) → load (the payment, under its lock) → decide (pure:
//   ../deciders/*, gathering what the decider asks for) → record attempt → call the processor →
//   append outcome → follow-ups (../policy/follow-ups.ts) → present (createEngine's presenter)
//
// This is where hooks go: the ports it calls (store, processors) can be decorated where the engine
// is composed; the metadata of every event is built in ../context.ts; `fault` is called at each
// point of an attempt (crash tests). The bracketing guarantee lives here and only here: the attempt
// event (its id the call's idempotency key) is appended with the revision the decision was made on
// before the processor is called, the outcome after. A crash or an unanswered call in between
// leaves the attempt open: the payment takes no other step until the reconciler (../reconcile.ts)
// learns the outcome from the processor; a call that lands after the reconciler found it never
// received is recorded as the processor's late answer (recordLateAnswer).
import type { AttemptEvent, PaymentEvent } from "../../../machines/events.js";
import { applyPaymentEvent, type PaymentSnapshot } from "../../../machines/fold.js";
import type { TerminalRecord } from "../../../projections/terminals.js";
import { CardflowError, NotFound, ProcessorAnswerUnapplied, ProcessorUnavailable, RETRY_WITH_KEY, TransitionNotAllowed } from "../../errors.js";
import type { Ids } from "../../ids.js";
import type { Processors, RecordedOutcome } from "../../processors/port.js";
import { WrongExpectedRevision } from "../../store/port.js";
import { paymentIdOfSecret, requireSecret, unknownSecret } from "../client-secret.js";
import type { Clock } from "../../clock.js";
import { attemptClock, byClientSecret, withoutAnswer, type CommandContext } from "../context.js";
import { UNRECORDED, type Decide, type Decision } from "../deciders/decision.js";
import { lateAnswerEvents, OUTCOME_REFUSED, outcomeEvents, processorActed, refusedAttempt, sameCallAgain } from "../outcomes.js";
import { FOLLOW_UPS } from "../policy/follow-ups.js";
import { NEW_PAYMENT, viewOf, type Loaded, type PaymentStreams } from "../streams/payment-streams.js";
import { answeredLate, answerUnapplied, LateAnswerWaits, REFUSED_WHEN_ANSWERED, UnappliedLateAnswer, type LateAnswers } from "../streams/late-answers.js";
import { callProcessor, processorNameOf, processorOf, withoutAttempt } from "./processor-calls.js";

/** Fault injection for crash tests: called at each point of an attempt (a throw there is a crash). */
export type AttemptFault = (point: "after_attempt" | "after_call" | "after_outcome", attempt: AttemptEvent) => void;

/** One command's rule and what it needs gathered: the decider and the handler's I/O for it. */
export interface Step<Input, Context extends object = object, Need extends string = never> {
  /** The command's name, as refusals name it. */
  command: string;
  decide: Decide<Input, Context, Need>;
  /** Gathers what the decider asked for (a lookup, a processor read), before it decides again. */
  gather?: (need: Need, payment: Loaded, context: Context) => Promise<Partial<Context>>;
}

export interface RunOptions {
  /** Then what follows on its own (automatic capture, a synchronous terminal's card save), once something was appended. */
  followUps?: boolean;
}

export function createPipeline({ payments, lateAnswers, processors, clock, ids, fault, reconcileGraceMs = 30_000 }: { payments: PaymentStreams; lateAnswers: LateAnswers; processors: Processors; clock: Clock; ids: Ids; fault?: AttemptFault; reconcileGraceMs?: number }) {
  const paymentIdOf = (loaded: Loaded) => loaded.snapshot.context.intent!.payment_id;

  /** Decide: the decider's answer, gathering what it asks for first (in the order it asks). */
  async function decide<I, C extends object, N extends string>(loaded: Loaded, step: Step<I, C, N>, input: I, initial: C): Promise<Exclude<Decision<N>, { need: N }>> {
    let context = initial;
    for (;;) {
      const decision = step.decide(input, loaded.snapshot, context);
      if (!("need" in decision)) return decision as Exclude<Decision<N>, { need: N }>;
      if (!step.gather) throw new Error(`${step.command}: the decider needs ${decision.need}, which nothing gathers`);
      context = { ...context, ...(await step.gather(decision.need, loaded, context)) };
    }
  }

  /** decide, then carry the decision out (then the follow-ups, when asked). */
  async function run<I, C extends object, N extends string>(loaded: Loaded, step: Step<I, C, N>, input: I, ctx: CommandContext, options: RunOptions = {}): Promise<Loaded> {
    const earlier = await answeredBefore(loaded, await decide(loaded, step, input, {} as C), ctx);
    return "answer" in earlier ? earlier.answer : carryOut(loaded, earlier.decision, ctx, step.command, options);
  }

  /**
   * Two steps of one command (collect a card, then authorize it): the second decided on the
   * payment as the first leaves it, and both appended in one append with one expected revision,
   * so a concurrent request finds both or neither, never a 409 after the first took effect.
   */
  async function runBoth<I, C extends object, N extends string, J, D extends object, M extends string>(loaded: Loaded, first: Step<I, C, N>, firstInput: I, second: Step<J, D, M>, input: J, ctx: CommandContext, options: RunOptions = {}): Promise<Loaded> {
    const earlier = await answeredBefore(loaded, await decide(loaded, first, firstInput, {} as C), ctx);
    if ("answer" in earlier) return earlier.answer;
    const { decision } = earlier;
    if (!("append" in decision) || decision.stopTerminal !== undefined) return carryOut(loaded, decision, ctx, first.command, options);
    let snapshot: PaymentSnapshot | null = loaded.snapshot;
    for (const e of decision.append) snapshot = snapshot && applyPaymentEvent(snapshot, e);
    if (!snapshot) return carryOut(loaded, decision, ctx, first.command, options); // refused there, as the machine says
    const decidedOn: Loaded = { ...loaded, snapshot };
    return carryOut(loaded, await decide(decidedOn, second, input, {} as D), ctx, second.command, options, { before: decision.append, decidedOn });
  }

  /**
   * A retry (same Idempotency-Key) of a request whose processor call's outcome was unknown is
   * answered from the store, never with a second call: 503 again while that call is open, the
   * payment as its outcome left it once known, decided anew if the processor did nothing
   * (../outcomes.ts earlierTry): then the same call is made again, under the abandoned call's
   * attempt id, if the processor never received it (it may still land: it acts once per key).
   * Looked for only before a call or a refusal, and read from the store only when the key made a
   * call on this payment (Loaded.attemptKeys): a state cached from before that call is then no
   * answer, and a first try costs no read. Returns the earlier try's answer, or the decision.
   */
  async function answeredBefore<D extends Exclude<Decision<string>, { need: string }>>(loaded: Loaded, decision: D, ctx: CommandContext): Promise<{ answer: Loaded } | { decision: D }> {
    const key = ctx.idempotency_key;
    if (!key || !("attempt" in decision || "refuse" in decision) || !loaded.attemptKeys.includes(key)) return { decision };
    const earlier = await payments.earlierTry(paymentIdOf(loaded), key, byClientSecret(ctx.actor), ctx.idempotency_since);
    if (!earlier) return { decision };
    if ("unfit" in earlier) {
      // the processor acted on the try's call, the payment did not take its answer: answered as then
      const unapplied = await lateAnswers.unappliedFor(paymentIdOf(loaded), earlier.unfit);
      if (unapplied) throw answerUnapplied(unapplied);
      return { decision }; // it declined: nothing moved
    }
    if ("anew" in earlier) return { decision: "attempt" in decision ? { ...decision, attempt: sameCallAgain(decision.attempt, earlier.reuse) } : decision };
    if ("open" in earlier) throw unknownOutcome(earlier.open);
    ctx.answeredFromStore?.();
    return { answer: earlier.answer };
  }

  const unknownOutcome = (attemptId: string, cause?: unknown) =>
    new ProcessorUnavailable(
      `the processor's answer to attempt ${attemptId} is not known${cause instanceof Error ? ` (${cause.message})` : ""}; it is settled with the processor shortly: ${RETRY_WITH_KEY}`,
      // the reconciler asks once the attempt is older than its grace
      { cause, retryAfterSeconds: Math.max(1, Math.ceil(reconcileGraceMs / 1000)) },
    );

  /** A new payment: decide from nothing, then its first append, under its lock. */
  async function create<I, C extends object, N extends string>(step: Step<I, C, N>, input: I, initial: C, ctx: CommandContext): Promise<Loaded> {
    const decision = await decide(NEW_PAYMENT, step, input, initial);
    if ("refuse" in decision) throw decision.refuse;
    const [first] = "append" in decision ? decision.append : [];
    if (first?.type !== "PaymentIntentCreated") throw new Error(`${step.command}: a new payment starts with PaymentIntentCreated`);
    return payments.create(first.data.payment_id, (decision as { append: PaymentEvent[] }).append, ctx);
  }

  /**
   * Carries out a decision: throws a refusal, appends events, or makes a bracketed processor call.
   * `before`: events an earlier step of the command decided (runBoth), appended in the same append,
   * the decision made on the payment as they leave it (`decidedOn`).
   */
  async function carryOut(loaded: Loaded, decision: Exclude<Decision<string>, { need: string }>, ctx: CommandContext, command: string, options: RunOptions = {}, { before = [], decidedOn = loaded }: { before?: PaymentEvent[]; decidedOn?: Loaded } = {}): Promise<Loaded> {
    if ("refuse" in decision) throw decision.refuse;
    if ("unchanged" in decision && before.length === 0) return loaded;
    let after: Loaded;
    if ("unchanged" in decision) {
      after = await payments.append(paymentIdOf(loaded), loaded, before, ctx, command);
    } else if ("append" in decision) {
      // a terminal collecting is stopped first (no money moved yet, so no attempt)
      const { stopTerminal } = decision;
      if (stopTerminal !== undefined) {
        const payment = viewOf(decidedOn);
        await withoutAttempt(processorNameOf(payment), "cancelTerminalAuthorization", () => processorOf(processors, payment).cancelTerminalAuthorization({ payment, terminal_id: stopTerminal }));
      }
      after = await payments.append(paymentIdOf(loaded), loaded, [...before, ...decision.append], ctx, command);
    } else {
      after = await bracket(loaded, decision.attempt, decision.terminal, ctx, command, [...before, ...(decision.before ?? [])], decidedOn);
    }
    return options.followUps ? followUps(after, ctx) : after;
  }

  /** Record attempt → call → append outcome; returns the payment after the outcome. */
  async function bracket(loaded: Loaded, decided: AttemptEvent, terminal: TerminalRecord | undefined, commandCtx: CommandContext, command: string, before: PaymentEvent[] = [], decidedOn = loaded): Promise<Loaded> {
    let ctx = attemptClock(clock, commandCtx);
    const paymentId = paymentIdOf(loaded);
    // a new call gets an id of its own; a call made again (sameCallAgain) keeps its id, the processor's key
    const event = decided.data.attempt_id === UNRECORDED ? ({ ...decided, data: { ...decided.data, attempt_id: ids.id("att") } } as AttemptEvent) : decided;
    const attempt_id = event.data.attempt_id;
    const reference = loaded.snapshot.context.intent!.external_transaction_id; // as it was before this command
    // the HTTP idempotency record goes with the outcome: the answer is known only then
    const attempted = await payments.append(paymentId, loaded, [...before, event], withoutAnswer(ctx), command);
    fault?.("after_attempt", event);
    let recorded;
    try {
      recorded = await callProcessor(processors, viewOf(decidedOn), event, terminal);
    } catch (error) {
      ctx = attemptClock(clock, commandCtx); // what the processor answered is recorded at the time it answered
      // a processor's CardflowError is its answer that it did nothing; anything else leaves the outcome unknown
      if (error instanceof CardflowError) {
        await payments.append(paymentId, attempted, refusedAttempt(attempt_id, error.code, before, reference), withoutAnswer(ctx), command);
        throw error;
      }
      throw unknownOutcome(attempt_id, error);
    }
    fault?.("after_call", event);
    ctx = attemptClock(clock, commandCtx);
    try {
      const after = await payments.append(paymentId, attempted, outcomeEvents(viewOf(attempted), recorded), ctx, command);
      fault?.("after_outcome", event);
      return after;
    } catch (error) {
      if (error instanceof TransitionNotAllowed) {
        // the processor's answer does not fit the payment (an authorization for another amount):
        // the attempt is closed rather than left blocking the payment; what the processor did, when
        // it acted, is kept beside the payment for an operator and never answered as done
        await payments.append(paymentId, attempted, refusedAttempt(attempt_id, OUTCOME_REFUSED, before, reference), withoutAnswer(ctx), command);
        throw (await keepUnfitAnswer(paymentId, event, outcomeEvents(viewOf(attempted), recorded), error.message, ctx)) ?? error;
      }
      if (!(error instanceof WrongExpectedRevision)) throw error;
      // another process's reconciler closed the attempt first: with the processor's recorded
      // outcome (the payment as it now stands), or as never received, having asked while the call
      // was still on its way: what the processor did is then recorded now, as its late answer
      return recordLateAnswer(paymentId, event, attempted.revision, recorded, ctx, command);
    }
  }

  /**
   * The processor's answer to an attempt that was abandoned as never received, appended on the
   * payment as it now stands (its metadata naming the attempt as `late_answer_to`; with the
   * command's answer): the money the call moved is on the record, once, and a retry with the same
   * key replays it (never a second call). The payment as it stands when the attempt was answered
   * meanwhile, its late answer recorded already (the reconciler's second look, or the call's own
   * command), or its call made again by a retry (whose outcome records what the processor did).
   * The machine refuses it when the payment moved on (another call made since): then it is
   * recorded beside the payment for an operator (LateAnswerUnapplied) and thrown as
   * UnappliedLateAnswer, never answered as done. While another call is in flight it cannot be
   * decided yet: LateAnswerWaits (the reconciler's second look tries again on its next pass); so
   * too while the call made again by a retry is, after a bounded wait for its outcome.
   */
  async function recordLateAnswer(paymentId: string, attempt: AttemptEvent, attemptRevision: number, recorded: RecordedOutcome, ctx: CommandContext, command: string): Promise<Loaded> {
    const { attempt_id } = attempt.data;
    for (let conflicts = 0; ; conflicts++) {
      const fate = await payments.attemptFate(paymentId, attempt, attemptRevision);
      if (fate === "open") throw new Error(`payment ${paymentId}: attempt ${attempt_id} is still open`);
      // made again by a retry through another process: its outcome is this call's answer, once recorded
      const current = fate === "reused" ? await payments.afterAttempt(paymentId, attempt_id) : (await payments.load(paymentId))!;
      if (current.snapshot.context.attempt?.data.attempt_id === attempt_id) throw new LateAnswerWaits(paymentId, attempt_id, attempt_id);
      const events = fate === "abandoned" ? lateAnswerEvents(viewOf(current), attempt, recorded) : [];
      if (events.length === 0) return current; // answered already (or by the call made again), or the processor refused without acting
      try {
        return await payments.append(paymentId, current, events, { ...ctx, late_answer_to: attempt_id }, command);
      } catch (error) {
        if (error instanceof WrongExpectedRevision && conflicts < 5) continue;
        const types = events.map((e) => e.type);
        // not a refusal: the command must not be decided again (a second call)
        if (!(error instanceof TransitionNotAllowed)) throw new Error(`${answeredLate(paymentId, attempt_id)}, and its answer (${types.join(", ")}) could not be recorded: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
        const inFlight = current.snapshot.context.attempt;
        if (inFlight !== null) throw new LateAnswerWaits(paymentId, attempt_id, inFlight.data.attempt_id, types);
        const data = { payment_id: paymentId, attempt_id, attempt_type: attempt.type, answer: events.map(({ type, data }) => ({ type, data: data as Record<string, unknown> })), reason: error.message };
        await lateAnswers.recordUnapplied(data, withoutAnswer(ctx));
        throw new UnappliedLateAnswer(data);
      }
    }
  }

  /**
   * A processor's answer the payment did not take when it came (`refusal`: the machine's), its
   * attempt abandoned (OUTCOME_REFUSED): when the processor acted (anything but a decline), what it
   * did is recorded beside the payment for an operator, and the error to answer with is returned.
   * Undefined when it moved nothing. The command's bracket and the reconciler alike.
   */
  async function keepUnfitAnswer(paymentId: string, attempt: AttemptEvent, answer: PaymentEvent[], refusal: string, ctx: CommandContext): Promise<ProcessorAnswerUnapplied | undefined> {
    if (!processorActed(answer)) return undefined;
    const { attempt_id } = attempt.data;
    const data = { payment_id: paymentId, attempt_id, attempt_type: attempt.type, answer: answer.map(({ type, data }) => ({ type, data: data as Record<string, unknown> })), reason: `${REFUSED_WHEN_ANSWERED}: ${refusal}` };
    await lateAnswers.recordUnapplied(data, withoutAnswer(ctx));
    return answerUnapplied(data);
  }

  /** What follows on its own (../policy/follow-ups.ts), each rule once, in order. */
  async function followUps(loaded: Loaded, ctx: CommandContext): Promise<Loaded> {
    for (const rule of FOLLOW_UPS) {
      const next = rule(loaded.snapshot);
      if (!next) continue;
      try {
        loaded = await bracket(loaded, next.attempt, undefined, ctx, next.command);
      } catch (error) {
        if (!next.tolerates?.(error)) throw error;
        loaded = (await payments.load(paymentIdOf(loaded)))!;
      }
    }
    return loaded;
  }

  /**
   * Load: runs `body` on the payment of a client secret, once the secret is checked; `named`, the
   * payment the request names besides (the card saved from a client), which must be the secret's, in
   * that account. A secret naming no payment, or the payment not there, is refused like a wrong
   * secret (401), not as a missing payment: a guesser learns nothing.
   */
  async function onPaymentOfSecret(clientSecret: string, body: (loaded: Loaded) => Promise<Loaded>, named?: { accountId: string; paymentId: string }): Promise<Loaded> {
    const paymentId = named?.paymentId ?? paymentIdOfSecret(clientSecret);
    try {
      return await payments.onPayment(named?.accountId ?? null, paymentId, async (loaded) => {
        requireSecret(viewOf(loaded), clientSecret);
        return body(loaded);
      });
    } catch (error) {
      if (error instanceof NotFound && error.id === paymentId) throw unknownSecret();
      throw error;
    }
  }

  return {
    /** Load: runs `body` on the account's payment under its lock (accountId null: access proved another way). */
    onPayment: payments.onPayment,
    onPaymentOfSecret,
    run,
    runBoth,
    create,
    carryOut,
    recordLateAnswer,
    keepUnfitAnswer,
    attemptFate: payments.attemptFate,
  };
}

export type Pipeline = ReturnType<typeof createPipeline>;
