// The HTTP answer to every error a request can end with: its status and, for a problem that passes,
// how soon a retry is worth it (Retry-After). The engine's refusals carry their status
// (src/errors.ts); the errors of the ports name their problem only, and HTTP decides here.
import { RETRY_WITH_KEY, type CardflowError } from "../errors.js";
import { LateAnswerWaits } from "../engine.js";
import { StoreUnavailable } from "../store/port.js";

export interface HttpAnswer {
  status: number;
  /** Seconds after which a retry is worth it (the Retry-After header). */
  retryAfterSeconds?: number;
}

/** Errors of the layers below that carry no HTTP status, and how HTTP answers them. */
const PORT_ERRORS: readonly [new (...args: never[]) => CardflowError, HttpAnswer][] = [
  // the database is away for a moment: nothing was acknowledged, a retry soon is worth it
  [StoreUnavailable, { status: 503, retryAfterSeconds: 1 }],
];

export function httpAnswerOf(error: CardflowError): HttpAnswer {
  for (const [type, answer] of PORT_ERRORS) if (error instanceof type) return answer;
  const { status, retryAfterSeconds } = error as CardflowError & Partial<HttpAnswer>;
  return { status: status ?? 500, ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }) };
}

interface PendingAnswer {
  status: number;
  code: string;
  retryAfterSeconds: number;
  /** What the client does next, said after the error's own account. */
  advice: string;
}
/**
 * Errors that are not refusals (the command acted: they are not CardflowErrors, which the engine
 * may decide again) but whose outcome comes later: a retry with the same Idempotency-Key gets it.
 */
const PENDING: readonly [new (...args: never[]) => Error, PendingAnswer][] = [
  // the processor's late answer is recorded once the call in flight is closed (by the reconciler; by
  // that call itself when it is the same call, made again by a retry)
  [LateAnswerWaits, { status: 503, code: "late_answer_pending", retryAfterSeconds: 30, advice: `${RETRY_WITH_KEY} to get the payment as it took the answer` }],
];

export function pendingAnswerOf(error: unknown): PendingAnswer | undefined {
  for (const [type, answer] of PENDING) if (error instanceof type) return answer;
  return undefined;
}
