// Under `cardflow serve --workers N` the primary serves the workers' metrics aggregated
// (src/serve/cluster.ts, prom-client's AggregatorRegistry): counts are summed, but the gauges that
// describe the store or the service as a whole (open attempts, the oldest one's age, shutting
// down) are each worker's same figure, so they are the largest, not the sum (2 workers read 2
// for "shutting down" and twice the open attempts).
import { AggregatorRegistry } from "prom-client";
import { describe, expect, it } from "vitest";
import { createMetrics } from "../../src/observability/metrics.js";

describe("the workers' metrics, aggregated by the primary", () => {
  it("sums counts; takes the largest of the store-wide gauges", async () => {
    const workers = [createMetrics(), createMetrics()];
    for (const [i, m] of workers.entries()) {
      m.commands.labels("createIntent", "ok").inc(3);
      m.reconcileOpen.set(2);
      m.reconcileOldest.set(40 + i);
      m.shuttingDown.set(1);
    }
    const text = await AggregatorRegistry.aggregate(await Promise.all(workers.map((m) => m.registry.getMetricsAsJSON()))).metrics();
    expect(text).toMatch(/^cardflow_commands_total\{command="createIntent",outcome="ok"\} 6$/m);
    expect(text).toMatch(/^cardflow_reconciler_open_attempts 2$/m);
    expect(text).toMatch(/^cardflow_reconciler_oldest_open_attempt_seconds 41$/m);
    expect(text).toMatch(/^cardflow_shutting_down 1$/m);
  });
});
