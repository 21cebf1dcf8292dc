// Who and what caused a command, and the metadata every event it appends carries: built here,
// once, for every stream the engine writes (payments, accounts, terminals, API keys). What more an
// event's metadata should say (a machine version, say) is added in eventMetadata, nowhere else.
import { MACHINE_VERSION } from "../../machines/definition.js";
import { isoTimestamp, type Clock } from "../clock.js";
import { RECORD_RULES, type EventMetadata } from "../events/envelope.js";
import type { Ids } from "../ids.js";
import type { IdempotencyRecord } from "../store/port.js";

/** Who and what caused a command: recorded in the metadata of every event it appends. */
export interface CommandContext {
  /**
   * The command's clock reading (ISO 8601): every event and field it produces uses it, except a
   * processor call's attempt, which carries the reading taken when it is opened, and the call's
   * outcome, the reading taken when the processor answered (attemptClock): an as-of moment between
   * the two shows the payment as it was while the call was on its way.
   */
  now?: string;
  request_id?: number;
  idempotency_key?: string | null;
  /**
   * Keys are kept for a time (src/idempotency.ts), then free to use again: a try under the same key
   * before this moment (ISO 8601) was another request, not an earlier try of this one.
   */
  idempotency_since?: string;
  /** e.g. an API key id, CLIENT_SECRET_ACTOR; defaults to "library". */
  actor?: string;
  /**
   * HTTP Idempotency-Key: given what the command would answer after an append (the payment's
   * record, a created intent, a terminal), the record to store in that append's transaction (so a
   * retry after a crash finds it and acts no second time). Undefined: this append's state is not
   * the command's answer (a synchronous terminal's started collection: its answer comes after the wait).
   */
  idempotency?: (answer: any) => IdempotencyRecord | undefined;
  /**
   * The attempt whose processor answer the events record after another process's reconciler had
   * abandoned it (the call landed after it was found never received): in their metadata, as
   * `late_answer_to`, the link an audit follows from the answer to its call.
   */
  late_answer_to?: string;
  /** Told when the command answered from what an earlier try with its Idempotency-Key did (a replay, not a new effect). */
  answeredFromStore?: () => void;
}

/**
 * The actor of a request authorised by a payment's client secret (the client SDK's). Its
 * Idempotency-Keys are the secret's, not the merchant account's (src/http/route.ts scopes them
 * apart): on one payment, the same key sent by the client and by the merchant is two requests.
 */
export const CLIENT_SECRET_ACTOR = "client_secret";
export const byClientSecret = (actor: string | null | undefined) => actor === CLIENT_SECRET_ACTOR;

/** The context with the command's clock reading, taken once (kept if the caller took it already). */
export const commandClock = (clock: Clock, ctx: CommandContext): CommandContext => (ctx.now ? ctx : { ...ctx, now: isoTimestamp(clock.now()) });

/**
 * The context of a processor call's attempt and outcome: the clock read when the attempt is opened.
 * The reconciler's grace counts from the attempt's time: stamped with the request's arrival after
 * the command waited for its payment's lock, a call still on its way could look due at once.
 */
export const attemptClock = (clock: Clock, ctx: CommandContext): CommandContext => ({ ...ctx, now: isoTimestamp(clock.now()) });

/** The context of an append that carries no answer (an attempt, before the outcome is known). */
export const withoutAnswer = (ctx: CommandContext): CommandContext => ({ ...ctx, idempotency: undefined });

/** The metadata of the events one append writes, with the version of the machine that decided them (an audit names it). */
export function eventMetadata(ctx: CommandContext, clock: Clock, ids: Ids): EventMetadata {
  return {
    timestamp: ctx.now ?? isoTimestamp(clock.now()),
    request_id: ctx.request_id ?? ids.requestId(),
    idempotency_key: ctx.idempotency_key ?? null,
    actor: ctx.actor ?? "library",
    machine_version: MACHINE_VERSION,
    record_rules: RECORD_RULES,
    ...(ctx.late_answer_to !== undefined && { late_answer_to: ctx.late_answer_to }),
  };
}
