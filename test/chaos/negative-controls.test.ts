// Negative controls: the chaos run against servers with a seeded defect (src/seeded-defects.ts, a
// sandbox-only switch) must report it. Each defect breaks one guarantee; the checker names it:
// appends that ignore the expected revision leave streams that are not paths of the machine; a
// server that forgets Idempotency-Keys answers a resend with another answer (and acts twice);
// answering before the append loses acknowledged writes and shows reads without them.
import { describe, expect, it } from "vitest";
import { runChaos } from "../../scripts/chaos/run.js";
import type { SeededDefect } from "../../src/seeded-defects.js";

const CONTROLS: Array<[SeededDefect, string[]]> = [
  ["skip-expected-revision", ["b:not_a_path"]],
  ["forget-idempotency-keys", ["d:resend_answer_differs"]],
  ["ack-before-append", ["a:lost_write", "f:stale_read"]],
];

describe.each(CONTROLS)("seeded defect %s", (defect, expected) => {
  it(`is reported by the checker (${expected.join(", ")})`, { timeout: 300_000 }, async () => {
    // three payments at a time: the workers' operations collide on them across the two processes;
    // the reconciler gets little time at the end (it cannot fold a broken stream anyway)
    const { summary } = await runChaos({ store: "sqlite", seconds: 25, seed: 29, pool: 3, defect, settleMs: 10_000 });
    console.info(`[figures] seeded defect ${defect}: anomalies ${JSON.stringify(summary.anomalies)}`);
    for (const kind of expected) expect(summary.anomalies[kind] ?? 0, kind).toBeGreaterThan(0);
  });
});
