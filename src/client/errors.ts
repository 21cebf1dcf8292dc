// What a client call can end with besides its answer: the API's problem+json (ApiError), no
// answer at all after the retries (ConnectionError), or a wait that ran out (WaitTimeout).

import type { Problem as ServerProblem } from "../http/problem.js";

/** An RFC 9457 problem the API answered (README: Errors). */
export interface Problem extends ServerProblem {
  /** For a step the payment's status does not allow (409). */
  current_status?: string;
  allowed_next_steps?: string[];
}

/** The API refused the request: its problem's fields, typed. */
export class ApiError extends Error {
  override readonly name = "ApiError";
  readonly status: number;
  readonly code: string;
  /** The request field at fault, or null. */
  readonly param: string | null;
  readonly request_id: number | null;
  readonly detail: string;
  readonly current_status: string | undefined;
  readonly allowed_next_steps: string[] | undefined;
  constructor(readonly problem: Problem) {
    super(`${problem.status} ${problem.code}: ${problem.detail}`);
    this.status = problem.status;
    this.code = problem.code;
    this.param = problem.param ?? null;
    this.request_id = problem.request_id ?? null;
    this.detail = problem.detail;
    this.current_status = problem.current_status;
    this.allowed_next_steps = problem.allowed_next_steps;
  }
}

/** No answer from the service (refused connection, reset, DNS), after every retry. */
export class ConnectionError extends Error {
  override readonly name = "ConnectionError";
  /** The request's method: a command (not GET) that got no answer may have been applied or not. */
  readonly method: string;
  constructor(message: string, options: { cause: unknown; method: string }) {
    super(message, options);
    this.method = options.method;
  }
}

/** waitForPayment gave up: the payment had not reached a status it waited for. */
export class WaitTimeout extends Error {
  override readonly name = "WaitTimeout";
  constructor(readonly payment_id: string, readonly last_status: string | null, timeoutMs: number) {
    super(`payment ${payment_id} is still ${last_status ?? "unread"} after ${timeoutMs} ms`);
  }
}
