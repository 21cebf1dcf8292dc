// RFC 9457 problem details: every error answer of the API is application/problem+json with
// `type`, `title`, `status`, `detail`, plus `code`, `param` and `request_id` (and, for a step
// the payment's status does not allow, `current_status` and `allowed_next_steps`).
import { STATUS_CODES } from "node:http";
import { CardflowError, RETRY_WITH_KEY, TransitionNotAllowed } from "../errors.js";
import { successStatus, type Version } from "../present/api-versions.js";
import { httpAnswerOf, pendingAnswerOf } from "./status.js";
import { TransitionRefused } from "../../machines/fold.js";
import { UnreadableEvent } from "../store/port/events.js";

/** Errors of the HTTP layer itself (authentication, account scope, Idempotency-Key). */
export class HttpProblem extends CardflowError {
  override readonly name = "HttpProblem";
  override readonly param: string | null;
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    param: string | null = null,
    /** Seconds after which a retry is worth it (the HTTP Retry-After). */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.param = param;
  }
}

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  param: string | null;
  request_id: number;
  [extension: string]: unknown;
}

export const PROBLEM_CONTENT_TYPE = "application/problem+json";

/** One type URI per code (a URN: identifies the problem, never dereferenced). */
export const problemType = (code: string) => `urn:cardflow:problem:${code}`;

export function problem(status: number, code: string, detail: string, param: string | null, requestId: number, extra: Record<string, unknown> = {}): Problem {
  return { type: problemType(code), title: STATUS_CODES[status] ?? "Error", status, detail, code, param, request_id: requestId, ...extra };
}

/** A POST sent without a body (with a JSON media type or none). */
export const EMPTY_BODY = "the body is empty; send a JSON object";

/** Fastify's own request errors (body parsing, limits) by their code. */
const FRAMEWORK_ERRORS: Record<string, { status: number; code: string; detail: string }> = {
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, code: "invalid_json", detail: EMPTY_BODY },
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, code: "body_too_large", detail: "the body is larger than this API accepts" },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { status: 415, code: "unsupported_media_type", detail: "send the body as application/json" },
  // ./json-body.ts
  CF_BODY_ENCODED: { status: 415, code: "unsupported_media_type", detail: "Content-Encoding: the body is read as sent; send it uncompressed (no Content-Encoding, or identity)" },
  CF_BODY_CHARSET: { status: 415, code: "unsupported_media_type", detail: "Content-Type: the body is read as UTF-8; send application/json with charset=utf-8 or no charset" },
  CF_BODY_NOT_UTF8: { status: 400, code: "invalid_json", detail: "the body is not valid UTF-8; send JSON encoded in UTF-8" },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, code: "invalid_content_length", detail: "Content-Length does not match the body" },
  FST_ERR_BAD_URL: { status: 400, code: "invalid_url", detail: "the URL is not validly percent-encoded" },
  FST_ERR_MAX_PARAM_LENGTH: { status: 414, code: "uri_too_long", detail: "a path parameter is longer than this API accepts" },
};

/**
 * The problem for any error a request ends with; `internal` is true for a 5xx (to be logged);
 * `retryAfterSeconds` for a problem that passes (src/http/status.ts).
 */
export function problemOf(error: unknown, requestId: number, version: Version = "v2"): { problem: Problem; internal: boolean; retryAfterSeconds?: number } {
  if (error instanceof CardflowError) {
    const { status, retryAfterSeconds } = httpAnswerOf(error);
    const answer = problem(status, error.code, error.message, error.param, requestId, error.details());
    return { problem: inVersion(answer, error, version), internal: false, ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }) };
  }
  const pending = pendingAnswerOf(error);
  if (pending) return { problem: problem(pending.status, pending.code, `${(error as Error).message}; ${pending.advice}`, null, requestId), internal: false, retryAfterSeconds: pending.retryAfterSeconds };
  const e = error as { code?: string; statusCode?: number; message?: string };
  const known = e.code ? FRAMEWORK_ERRORS[e.code] : undefined;
  if (known) return { problem: problem(known.status, known.code, known.detail, null, requestId), internal: false };
  if (typeof e.statusCode === "number" && e.statusCode >= 400 && e.statusCode < 500) {
    // e.g. a prototype-poisoning body refused by the JSON parser, a malformed URL
    return { problem: problem(e.statusCode, "bad_request", e.message ?? "bad request", null, requestId), internal: false };
  }
  if (error instanceof TransitionRefused || error instanceof UnreadableEvent) {
    // a store changed by hand beneath the service: its fault, said in words an operator can act on
    // (the event itself only in the log: the asker may not own it when its owner cannot be read)
    const detail = "the stored history of this payment cannot be read: its events were changed outside cardflow; `cardflow audit` names what changed";
    return { problem: problem(500, "stored_history_unreadable", detail, null, requestId), internal: true };
  }
  return { problem: problem(500, "internal_error", "the service failed to handle this request", null, requestId), internal: true };
}

/**
 * The detail of a problem answering a request sent without an Idempotency-Key: the advice to retry
 * with "the same" key (to the detail's end) has no key to name, and sent again without one, a request
 * that may have acted could act twice.
 */
export function withoutKey(detail: string): string {
  const advice = detail.indexOf(RETRY_WITH_KEY);
  return advice < 0 ? detail : `${detail.slice(0, advice)}read the payment before sending this request again (it carried no Idempotency-Key: sent again without one, it may act twice)`;
}

/** A step refused in status `succeeded` is written `success` by /v1, as its records are (src/present/api-versions.ts). */
function inVersion(answer: Problem, error: CardflowError, version: Version): Problem {
  if (!(error instanceof TransitionNotAllowed) || error.currentStatus !== "succeeded" || version === "v2") return answer;
  const status = successStatus(version);
  // the detail names the status as TransitionNotAllowed writes it: "… in status succeeded …"
  return { ...answer, current_status: status, detail: answer.detail.replace(" in status succeeded", ` in status ${status}`) };
}
