// The HTTP answer of each error (src/http/status.ts): the engine's refusals keep the status they
// carry; a port's error that carries none (the store unavailable) is answered by the HTTP table.
import { describe, expect, it } from "vitest";
import { AttemptInFlight, InvalidRequest, TransitionNotAllowed } from "../../src/errors.js";
import { IdempotencyKeyInUse } from "../../src/idempotency.js";
import { problemOf } from "../../src/http/problem.js";
import { StoreUnavailable } from "../../src/store/port.js";

describe("the HTTP answer of an error", () => {
  it("a store unavailable is 503 with Retry-After 1, though the store's error names no status", () => {
    const error = new StoreUnavailable("connection lost");
    expect("status" in error).toBe(false);
    const { problem, internal, retryAfterSeconds } = problemOf(error, 7);
    expect([problem.status, problem.code, problem.title, internal, retryAfterSeconds]).toEqual([503, "store_unavailable", "Service Unavailable", false, 1]);
  });

  it("the engine's refusals keep their own status, and a retry hint only where they give one", () => {
    expect(problemOf(new InvalidRequest("amount: bad", "amount"), 1)).toMatchObject({ problem: { status: 400, param: "amount" }, internal: false });
    expect(problemOf(new InvalidRequest("amount: bad", "amount"), 1)).not.toHaveProperty("retryAfterSeconds");
    expect(problemOf(new TransitionNotAllowed("pi_1", "capture", "canceled", []), 1).problem).toMatchObject({ status: 409, current_status: "canceled", allowed_next_steps: [] });
    expect(problemOf(new IdempotencyKeyInUse(), 1)).toMatchObject({ problem: { status: 409 }, retryAfterSeconds: 1 });
    // another call in flight passes: retry shortly, as its detail says, and Retry-After says when
    expect(problemOf(new AttemptInFlight("payment pi_1 has a processor call in flight"), 1)).toMatchObject({ problem: { status: 409, code: "attempt_in_flight" }, retryAfterSeconds: 1 });
  });

  it("anything else is a 500 to log", () => {
    expect(problemOf(new Error("boom"), 1)).toMatchObject({ problem: { status: 500, code: "internal_error" }, internal: true });
  });
});
