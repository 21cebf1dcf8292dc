// cardflow_late_answers_total: an append carrying a processor's late answer (its metadata names the
// abandoned attempt, src/engine/handlers/pipeline.ts recordLateAnswer) counts once; others do not.
// cardflow_late_answers_unapplied_total: the record of one the payment no longer takes.
import { describe, expect, it } from "vitest";
import { createMetrics } from "../../src/observability/metrics.js";
import { instrumentStore } from "../../src/observability/instrument-ports.js";
import { createMemoryStore } from "../../src/store/memory/index.js";

const event = (id: string, metadata: object = {}) => ({ id, type: "PaymentRefunded", version: 1, data: {}, metadata: { timestamp: "2026-01-01T00:00:00.000Z", request_id: 1, ...metadata } });

describe("the late answers' counter", () => {
  it("counts an append whose events answer an abandoned attempt, once per append", async () => {
    const metrics = createMetrics();
    const store = instrumentStore(createMemoryStore(), metrics);
    const count = async () => (await metrics.lateAnswers.get()).values[0]?.value ?? 0;
    await store.append("payment-p1", [event("e1")], { expectedRevision: "no_stream" });
    expect(await count()).toBe(0);
    await store.append("payment-p1", [event("e2", { late_answer_to: "att_1" }), event("e3", { late_answer_to: "att_1" })], { expectedRevision: 0 });
    expect(await count()).toBe(1);
  });

  it("counts the late answers the payment no longer takes apart: each LateAnswerUnapplied record", async () => {
    const metrics = createMetrics();
    const store = instrumentStore(createMemoryStore(), metrics);
    const unapplied = async () => (await metrics.lateAnswersUnapplied.get()).values[0]?.value ?? 0;
    await store.append("payment-p1", [event("e1", { late_answer_to: "att_1" })], { expectedRevision: "no_stream" });
    expect(await unapplied()).toBe(0);
    await store.append("late_answers-p1", [{ ...event("e2", { late_answer_to: "att_2" }), type: "LateAnswerUnapplied" }], { expectedRevision: "no_stream" });
    expect(await unapplied()).toBe(1);
    expect((await metrics.lateAnswers.get()).values[0]?.value).toBe(2);
  });
});
