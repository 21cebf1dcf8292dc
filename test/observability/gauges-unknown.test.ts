// The gauges read from the store when Prometheus scrapes: a read that fails (the database away)
// shows them as unknown (NaN), never as the last reading, which could be a reassuring 0.
import { expect, it } from "vitest";
import { createEngine } from "../../src/engine.js";
import { createMetrics } from "../../src/observability/metrics.js";
import { registerServiceGauges } from "../../src/serve/service-gauges.js";
import { StoreUnavailable } from "../../src/store/port.js";

const STORE_GAUGES = ["cardflow_read_model_lag_events", "cardflow_read_model_lag_seconds", "cardflow_webhook_deliveries_pending", "cardflow_webhook_deliveries_failing", "cardflow_webhook_endpoints_failing"];

it("a scrape that cannot read the store gives NaN for the lag and webhook gauges; the next one that can gives the figures again", async () => {
  const engine = createEngine();
  const metrics = createMetrics();
  registerServiceGauges(metrics, { engine });
  const values = async () => {
    await new Promise((resolve) => setImmediate(resolve)); // a scrape's reads are shared until the turn after it
    const text = await metrics.registry.metrics();
    return Object.fromEntries(STORE_GAUGES.map((name) => [name, new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1]]));
  };
  expect(await values()).toEqual(Object.fromEntries(STORE_GAUGES.map((name) => [name, "0"])));

  const away = () => Promise.reject(new StoreUnavailable("the database is away"));
  const { readModels, store } = engine;
  const [readAll, checkpoint, get, list] = [store.readAll, readModels.checkpoint, readModels.get, readModels.list];
  Object.assign(store, { readAll: away });
  Object.assign(readModels, { checkpoint: away, get: away, list: away });
  try {
    expect(await values()).toEqual(Object.fromEntries(STORE_GAUGES.map((name) => [name, "Nan"])));
  } finally {
    Object.assign(store, { readAll });
    Object.assign(readModels, { checkpoint, get, list });
  }
  expect(await values()).toEqual(Object.fromEntries(STORE_GAUGES.map((name) => [name, "0"])));
  await engine.close();
});
