// The HTTP answer to every error a request can end with: its status and, for a problem that passes,
// how soon a retry is worth it (Retry-After). The engine's refusals carry their status
// (src/errors.ts); the errors of the ports name their problem only, and HTTP decides here.
import type { CardflowError } from "../errors.js";
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
