// Typed errors of the engine. Each names the problem (`code`, and `param` for input errors); the
// engine's own refusals below also carry the status that classifies them (a documented part of the
// library's answers, the one the HTTP API sends). Errors of the ports (a store unavailable) name
// their problem only: the HTTP API decides how to answer those (src/http/status.ts).

/**
 * The advice of an answer whose request may have acted (its outcome settled later, or cut short):
 * sent again with its Idempotency-Key it cannot act twice. The HTTP API words it otherwise for a
 * request that carried no key (src/http/server.ts).
 */
export const RETRY_WITH_KEY = "retry with the same Idempotency-Key";

export abstract class CardflowError extends Error {
  abstract readonly code: string;
  readonly param: string | null = null;
  /** Extra fields for the problem+json body. */
  details(): Record<string, unknown> {
    return {};
  }
}

/** 400: the request is malformed or a field is invalid. Nothing was appended. */
export class InvalidRequest extends CardflowError {
  override readonly name = "InvalidRequest";
  readonly status = 400;
  readonly code: string;
  override readonly param: string | null;
  constructor(message: string, param: string | null = null, code = "invalid_request") {
    super(message);
    this.param = param;
    this.code = code;
  }
}

/** 401: the credential sent (a client secret) is not valid; what it would have opened is not said. */
export class Unauthorized extends CardflowError {
  override readonly name = "Unauthorized";
  readonly status = 401;
  readonly code = "unauthorized";
  override readonly param: string | null;
  constructor(message: string, param: string | null = null) {
    super(message);
    this.param = param;
  }
}

/** 404: no such resource for this merchant account (another account's resources read as missing). */
export class NotFound extends CardflowError {
  override readonly name = "NotFound";
  readonly status = 404;
  readonly code = "resource_missing";
  override readonly param: string | null;
  /** `where`: the scope it was looked for in (the caller's account, or a store for the CLI). */
  constructor(
    readonly resource: string,
    readonly id: string,
    param: string | null = null,
    where = "for this account",
  ) {
    super(`no ${resource} ${JSON.stringify(id)} ${where}`);
    this.param = param;
  }
}

/** 409: the machine does not allow this step in the payment's current status. */
export class TransitionNotAllowed extends CardflowError {
  override readonly name = "TransitionNotAllowed";
  readonly status = 409;
  readonly code = "payment_intent_unexpected_state";
  constructor(
    readonly paymentId: string,
    readonly command: string,
    readonly currentStatus: string,
    readonly allowedNextSteps: string[],
    reason?: string,
  ) {
    super(
      `payment ${paymentId} in status ${currentStatus} does not allow ${command}` +
        (reason ? ` (${reason})` : "") +
        `; allowed next steps: ${allowedNextSteps.length ? allowedNextSteps.join(", ") : "none"}`,
    );
  }
  override details() {
    return { current_status: this.currentStatus, allowed_next_steps: this.allowedNextSteps };
  }
}

/** 409: a resource is busy or already exists (terminal collecting, account exists, retries exhausted). */
export class Conflict extends CardflowError {
  override readonly name = "Conflict";
  readonly status = 409;
  readonly code: string;
  override readonly param: string | null;
  /** `param`: the field naming what is in the way (the busy terminal's terminal_id), if one does. */
  constructor(message: string, code = "conflict", param: string | null = null) {
    super(message);
    this.code = code;
    this.param = param;
  }
}

/** 409: another processor call on the payment is in flight (or one a crash left open, until the reconciler closes it): it passes. */
export class AttemptInFlight extends Conflict {
  /** Seconds after which a retry is worth it (the HTTP Retry-After). */
  readonly retryAfterSeconds = 1;
  constructor(message: string) {
    super(message, "attempt_in_flight");
  }
}

/** 402: the processor refused (for instance an expired card cannot be saved on file). */
export class ProcessorRefused extends CardflowError {
  override readonly name = "ProcessorRefused";
  readonly status = 402;
  readonly code: string;
  override readonly param: string | null;
  /** `param`: the field the processor refused, when it names one (a card number it does not take). */
  constructor(message: string, code = "processor_refused", param: string | null = null) {
    super(message);
    this.code = code;
    this.param = param;
  }
}

/**
 * The processor acted, but its answer does not fit the payment (an authorization for another amount
 * than the intent's, say): the attempt is closed and what the processor did is recorded beside the
 * payment for an operator (LateAnswerUnapplied), never answered as done. A Bad Gateway: the
 * processor's answer was not one cardflow can take.
 */
export class ProcessorAnswerUnapplied extends CardflowError {
  override readonly name = "ProcessorAnswerUnapplied";
  readonly status = 502;
  readonly code = "processor_answer_unapplied";
}

/**
 * 503: the processor's answer to a call was lost (a timeout, a dropped connection): it may have
 * acted. The attempt stays open until the reconciler learns its outcome; a retry with the same
 * Idempotency-Key is answered from the store (this again while open), never by a second call.
 */
export class ProcessorUnavailable extends CardflowError {
  override readonly name = "ProcessorUnavailable";
  readonly status = 503;
  readonly code = "processor_unavailable";
  /** Seconds after which a retry is worth it (the HTTP Retry-After): about when the reconciler has looked. */
  readonly retryAfterSeconds: number;
  constructor(message: string, options?: ErrorOptions & { retryAfterSeconds?: number }) {
    super(message, options);
    this.retryAfterSeconds = options?.retryAfterSeconds ?? 30;
  }
}

/**
 * 503: the engine was closed (engine.close()): a call made after it is not run, and a blocking
 * authorization still waiting for its shopper ends with this (its terminal's outcome is the
 * reconciler's, as after a crash). Retry with the same Idempotency-Key on an engine that runs.
 */
export class EngineClosed extends CardflowError {
  override readonly name = "EngineClosed";
  readonly status = 503;
  readonly code = "service_stopping";
  /** `then`: what to do next; by default, for a command the close cut short, the retry with its key. */
  constructor(what: string, then = `${RETRY_WITH_KEY} on an engine that runs`) {
    super(`the engine is closed: ${what}; ${then}`);
  }
}
