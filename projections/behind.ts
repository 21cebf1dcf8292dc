import { CardflowError } from "../src/errors.js";

/**
 * 503: a read that must reflect earlier writes waited its bound for the read models to pass them,
 * and they are still behind (the projector is slow, stopped or its database busy). Nothing is
 * wrong with the request; retry shortly. Never a stale answer instead.
 */
export class ReadModelBehind extends CardflowError {
  override readonly name = "ReadModelBehind";
  readonly status = 503;
  readonly code = "read_model_behind";
  /** Seconds after which a retry is worth it (the HTTP Retry-After). */
  readonly retryAfterSeconds = 1;
  constructor(
    readonly position: number,
    readonly applied: number,
    waitedMs: number,
  ) {
    super(`the read models are behind: they reflect the events up to position ${applied}, this read needs ${position}; waited ${waitedMs} ms; retry shortly`);
  }
  override details() {
    return { needed_position: this.position, applied_position: this.applied };
  }
}
