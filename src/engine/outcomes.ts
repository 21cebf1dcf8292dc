// What a processor answered, as the payment events that record it. One mapping for the command
// that made the call and for the reconciler that learned the answer later (processor lookup).
import { closesAttempt, isAttempt, type AttemptEvent, type PaymentEvent } from "../../machines/events.js";
import { applyPaymentEvent, applyStored, initialPaymentSnapshot, type PaymentSnapshot } from "../../machines/fold.js";
import type { AuthorizationOutcome, PaymentView, RecordedOutcome } from "../processors/port.js";
import type { RecordedEvent } from "../store/port.js";
import { byClientSecret } from "./context.js";

/** An authorization outcome (a charge, a collected card, a terminal's report); attempt_id when it answers one. */
export function authorizationEvents(outcome: AuthorizationOutcome, attempt_id?: string): PaymentEvent[] {
  const answers = attempt_id === undefined ? {} : { attempt_id };
  switch (outcome.kind) {
    case "authorized":
      return [{ type: "PaymentAuthorized", version: 1, data: { ...outcome.authorization, ...answers } }];
    case "captured":
      return [{ type: "PaymentCaptured", version: 1, data: { amount: outcome.authorization.amount_authorized, authorization: outcome.authorization, ...answers } }];
    case "capture_requested":
      return [{ type: "CaptureRequested", version: 1, data: { amount: outcome.authorization.amount_authorized, authorization: outcome.authorization, ...answers } }];
    case "failed":
      return [{ type: "AuthorizationFailed", version: 1, data: { last_error: outcome.last_error, last_error_code: outcome.last_error_code, ...answers } }];
  }
}

/** The reason recorded when the machine refuses what the processor answered for an attempt. */
export const OUTCOME_REFUSED = "outcome_refused";
/** The reason an attempt is abandoned when the processor has no record of its call. */
export const NEVER_RECEIVED = "never_received";

export const abandoned = (attempt_id: string, reason: string): PaymentEvent => ({ type: "AttemptAbandoned", version: 1, data: { attempt_id, reason } });

/**
 * An attempt the processor refused (it did nothing), closed: abandoned, and the reference given
 * with it (spec §4.4, `before` it) given back, so the refused authorization leaves the payment's
 * reference as it was (`previous`, none included).
 */
export function refusedAttempt(attempt_id: string, reason: string, before: readonly PaymentEvent[], previous: string | number | null): PaymentEvent[] {
  const gaveReference = before.some((e) => e.type === "TransactionReferenceGiven");
  return [abandoned(attempt_id, reason), ...(gaveReference ? [{ type: "TransactionReferenceGiven", version: 2, data: { external_transaction_id: previous } } as const] : [])];
}

/** A processor A terminal's collection ended by cardflow past the blocking auth's deadline (the command or the reconciler). */
export const shopperTimedOut = (): PaymentEvent => ({ type: "AuthorizationFailed", version: 1, data: { last_error: "Timed out waiting for shopper", last_error_code: "USER_TIMEOUT" } });

/** Whether the machine accepts `events` after `snapshot`. */
export function accepts(snapshot: PaymentSnapshot, events: readonly PaymentEvent[]): boolean {
  let next: PaymentSnapshot | null = snapshot;
  for (const event of events) next = next && applyPaymentEvent(next, event);
  return next !== null;
}

/** `events` if the machine accepts them after `snapshot`; else the attempt closed as abandoned (OUTCOME_REFUSED). */
export function acceptedOrAbandoned(snapshot: PaymentSnapshot, attempt_id: string, events: PaymentEvent[]): PaymentEvent[] {
  return accepts(snapshot, events) ? events : [abandoned(attempt_id, OUTCOME_REFUSED)];
}

/** Whether an answer moved anything at the processor: all but a decline did (what it did is then kept for an operator when the payment does not take it). */
export const processorActed = (answer: readonly PaymentEvent[]) => !answer.every((e) => e.type === "AuthorizationFailed");

/** The outcome events of the payment's attempt in flight, from what the processor recorded for it. */
export function outcomeEvents(payment: PaymentView, recorded: RecordedOutcome): PaymentEvent[] {
  const attempt = payment.attempt;
  if (!attempt) throw new Error(`payment ${payment.intent.payment_id} has no attempt in flight`);
  const { attempt_id } = attempt.data;
  if (recorded.call === "refused") return [abandoned(attempt_id, recorded.code)];
  switch (attempt.type) {
    case "AuthorizationAttempted":
      return authorizationEvents(expect(recorded, "authorize").outcome, attempt_id);
    case "TerminalAuthorizationAttempted": {
      const { terminal_id, terminal_type } = attempt.data;
      const started: PaymentEvent = { type: "TerminalAuthorizationStarted", version: 1, data: { terminal_id, terminal_type, attempt_id } };
      // the terminal may have finished already (an outcome found by the reconciler): it follows as a report
      const finished = expect(recorded, "start_terminal").outcome;
      return finished ? [started, ...authorizationEvents(finished)] : [started];
    }
    case "CaptureAttempted": {
      const type = expect(recorded, "capture").outcome.kind === "captured" ? "PaymentCaptured" : "CaptureRequested";
      return [{ type, version: 1, data: { amount: attempt.data.amount, authorization: null, attempt_id } }];
    }
    case "VoidAttempted":
      expect(recorded, "void");
      return [{ type: "PaymentCanceled", version: 1, data: { cancellation_reason: attempt.data.cancellation_reason, attempt_id } }];
    case "RefundAttempted": {
      const { refund_id } = expect(recorded, "refund");
      return [{ type: "PaymentRefunded", version: 1, data: { refund_id, amount: attempt.data.amount, reason: attempt.data.reason, attempt_id } }];
    }
    case "CardSaveAttempted": {
      const { payment_method_id } = expect(recorded, "save_card");
      const data = { payment_method_id, external_account_id: payment.intent.external_account_id, external_customer_id: attempt.data.external_customer_id, card: payment.card!, attempt_id };
      return [{ type: "CardSaved", version: 1, data }];
    }
  }
}

/**
 * What the processor did for an attempt that was abandoned while its call was still on its way
 * (a reconciler asked, heard "never received", then the call landed): the outcome events as the
 * processor's own report, naming no attempt (the machine takes those while none is in flight);
 * none when it refused without acting.
 */
export function lateAnswerEvents(payment: PaymentView, attempt: AttemptEvent, recorded: RecordedOutcome): PaymentEvent[] {
  if (recorded.call === "refused") return [];
  return outcomeEvents({ ...payment, attempt }, recorded).map((e) => {
    const { attempt_id: _late, ...data } = e.data as { attempt_id?: string };
    return { ...e, data } as PaymentEvent;
  });
}

function expect<C extends RecordedOutcome["call"]>(recorded: RecordedOutcome, call: C): Extract<RecordedOutcome, { call: C }> {
  if (recorded.call !== call) throw new Error(`processor recorded ${recorded.call} for an attempt that called ${call}`);
  return recorded as Extract<RecordedOutcome, { call: C }>;
}

/**
 * What a retry of a request (its Idempotency-Key) gets, from what its earlier try left on the
 * payment's stream, when that try made a processor call: `open`, its last call's outcome is not
 * known yet (answer 503 again, never call a second time); `anew`, that call was abandoned (the
 * processor did nothing) and the try had no other effect, so the request is decided anew, with
 * `reuse` the abandoned call when the processor had no record of it (never received): it may
 * still land, so the same call is made again under its id (the processor acts once per key);
 * else the `answer`: the payment right after the try's own events and what followed them on no
 * request's behalf (the reconciler's outcome, its follow-ups), before another request's: what the
 * try would have answered. Undefined when no call was made under the key. The try's events are
 * those under the key sent by the same side (`byClient`: the payment's client secret, else the
 * merchant's keys; ./context.ts CLIENT_SECRET_ACTOR) since the key's keeping time began (`since`):
 * the other side's same key is another request, and so is the same key used again once it was free.
 * `unfit`: the try's call was answered with what the payment did not take (OUTCOME_REFUSED): when
 * the processor acted, what it did is kept beside the payment (LateAnswerUnapplied) and the retry
 * is answered as the try was, never with a second call; when it declined, the request is decided anew.
 */
export type EarlierTry = { open: string } | { anew: true; reuse?: AttemptEvent } | { unfit: string } | { answer: PaymentSnapshot; through: RecordedEvent };

export function earlierTry(events: readonly RecordedEvent[], key: string, byClient: boolean, since?: string): EarlierTry | undefined {
  const after = since === undefined ? -Infinity : Date.parse(since);
  let snapshot = initialPaymentSnapshot;
  let last: { attempt: AttemptEvent; closed: "answered" | "abandoned" | null; reason?: string } | undefined;
  let acted = false;
  let following = false;
  let answer: { answer: PaymentSnapshot; through: RecordedEvent } | undefined;
  for (const e of events) {
    const inFlight = snapshot.context.attempt;
    snapshot = applyStored(snapshot, e);
    if (inFlight && inFlight.data.attempt_id === last?.attempt.data.attempt_id) {
      last.closed = closesAttempt(inFlight, e);
      if (last.closed === "abandoned") last.reason = (e.data as { reason: string }).reason;
    }
    const keyed = e.metadata.idempotency_key ?? null;
    // the processor's late answer to the try's abandoned call (recorded by whichever process): the try acted
    const lateAnswer = last !== undefined && last.closed === "abandoned" && e.metadata.late_answer_to === last.attempt.data.attempt_id;
    const mine = keyed === key && byClientSecret(e.metadata.actor) === byClient && Date.parse(e.metadata.timestamp) >= after;
    if (mine) {
      if (isAttempt(e)) last = { attempt: { type: e.type, version: e.version, data: e.data } as AttemptEvent, closed: null };
      // a reference is given with the try's call, and given back when the processor refuses it: not an effect of its own
      else if (e.type !== "AttemptAbandoned" && e.type !== "TransactionReferenceGiven") acted = true;
    }
    if (lateAnswer) acted = following = true;
    else if (keyed !== null) following = mine;
    if (following) answer = { answer: snapshot, through: e };
  }
  if (!last) return undefined;
  if (last.closed === null) return { open: last.attempt.data.attempt_id };
  if (last.closed === "abandoned" && !acted) {
    if (last.reason === OUTCOME_REFUSED) return { unfit: last.attempt.data.attempt_id };
    return last.reason === NEVER_RECEIVED ? { anew: true, reuse: last.attempt } : { anew: true };
  }
  return answer;
}

/**
 * The attempt decided for a retry: the try's call abandoned as never received made again, under
 * its attempt id (the call's idempotency key), when it is that same call (the same kind, for the
 * same amount); else a new call (bracket gives it an id of its own). A terminal's start is started
 * anew: it moves no money, and the terminal takes one collection per payment.
 */
export function sameCallAgain(decided: AttemptEvent, reuse: AttemptEvent | undefined): AttemptEvent {
  if (!reuse || reuse.type !== decided.type || decided.type === "TerminalAuthorizationAttempted") return decided;
  const { attempt_id, ...was } = reuse.data;
  const { attempt_id: _unrecorded, ...now } = decided.data;
  if (JSON.stringify(was) !== JSON.stringify(now)) return decided;
  return { ...decided, data: { ...decided.data, attempt_id } } as AttemptEvent;
}
