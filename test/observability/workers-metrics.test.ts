// Under `cardflow serve --workers N` the primary serves the workers' metrics aggregated
// (src/serve/cluster.ts, prom-client's AggregatorRegistry): counts are summed, but the gauges that
// describe the store or the service as a whole (open attempts, the oldest one's age, shutting
// down) are each worker's same figure, so they are the largest, not the sum (2 workers read 2
// for "shutting down" and twice the open attempts).
import { AggregatorRegistry } from "prom-client";
import { describe, expect, it } from "vitest";
import { createEngine } from "../../src/engine.js";
import { createMetrics } from "../../src/observability/metrics.js";
import { registerServiceGauges } from "../../src/serve/service-gauges.js";

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

  it("a gauge read from the store that a worker could not read (NaN, null once sent as JSON) is unknown for all, not 0; known everywhere, the largest", async () => {
    const engines = [createEngine(), createEngine()];
    const workers = engines.map((engine) => {
      const metrics = createMetrics();
      registerServiceGauges(metrics, { engine });
      return metrics;
    });
    // what the primary gets: each worker's metrics as JSON over the cluster channel
    const scrape = async () => {
      const sent = await Promise.all(workers.map(async (m) => JSON.parse(JSON.stringify(await m.registry.getMetricsAsJSON()))));
      return AggregatorRegistry.aggregate(sent).metrics();
    };
    expect(await scrape()).toMatch(/^cardflow_read_model_lag_events 0$/m);
    await new Promise((resolve) => setImmediate(resolve)); // a scrape's reads are shared until the turn after it
    Object.assign(engines[1]!.readModels, { checkpoint: () => Promise.reject(new Error("the database is away")), list: () => Promise.reject(new Error("the database is away")) });
    const text = await scrape();
    for (const gauge of ["cardflow_read_model_lag_events", "cardflow_read_model_lag_seconds", "cardflow_webhook_deliveries_pending", "cardflow_webhook_deliveries_failing", "cardflow_webhook_endpoints_failing"]) {
      expect(text).toMatch(new RegExp(`^${gauge} NaN$`, "mi"));
    }
    await Promise.all(engines.map((e) => e.close()));
  });
});
