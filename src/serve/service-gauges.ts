// Gauges read when Prometheus scrapes (never on a request's path): requests in flight, how far
// the read models are behind, the webhook deliveries waiting and failing. Registered once per
// served process, over its engine, webhooks and HTTP server. A failed read (the database away)
// sets its gauges to NaN: unknown, not the last reading (a lag of 0 while nothing can be read
// would say all is well); /readyz and the request errors say the store is away.
import { Gauge } from "prom-client";
import type { Engine } from "../engine.js";
import { PROJECTIONS } from "../../projections/registry.js";
import type { DeliveryState } from "../webhooks/delivery.js";
import type { EndpointDoc } from "../webhooks/endpoints.js";
import { FEED } from "../webhooks/feed.js";
import { MAX_OR_UNKNOWN, type Metrics } from "../observability/metrics.js";
import { readModelLag } from "../observability/read-lag.js";

/** Unprojected events are counted up to this (a scrape reads no more). */
export const LAG_COUNT_LIMIT = 1_000;

export interface GaugeSources {
  engine: Engine;
  /** The HTTP server's drain (src/http/drain.ts): its requests in flight. */
  drain?: { inFlight(): number };
}

export function registerServiceGauges(metrics: Metrics, { engine, drain }: GaugeSources): void {
  const registers = [metrics.registry];
  new Gauge({
    name: "cardflow_http_requests_in_flight",
    help: "Requests received and not answered yet",
    registers,
    collect() {
      if (drain) this.set(drain.inFlight());
    },
  });

  let lag: Promise<{ events: number; seconds: number } | null> | null = null;
  // the two lag gauges share one read per scrape
  const readLag = () => (lag ??= readModelLag({ store: engine.store, readModels: engine.readModels, clock: engine.clock, projections: PROJECTIONS }, LAG_COUNT_LIMIT).catch(() => null).finally(() => setImmediate(() => (lag = null))));
  new Gauge({
    name: "cardflow_read_model_lag_events",
    help: `Events appended and not yet projected into the read models (counted up to ${LAG_COUNT_LIMIT})`,
    aggregator: MAX_OR_UNKNOWN,
    registers,
    async collect() {
      const read = await readLag();
      this.set(read ? read.events : NaN);
    },
  });
  new Gauge({
    name: "cardflow_read_model_lag_seconds",
    help: "Age of the oldest event not yet projected into the read models (0 when caught up)",
    aggregator: MAX_OR_UNKNOWN,
    registers,
    async collect() {
      const read = await readLag();
      this.set(read ? read.seconds : NaN);
    },
  });

  let deliveries: Promise<{ pending: number; failing: number; endpointsFailing: number } | null> | null = null;
  const readDeliveries = () => (deliveries ??= webhookDeliveries(engine).catch(() => null).finally(() => setImmediate(() => (deliveries = null))));
  const deliveryGauge = (name: string, help: string, pick: (d: { pending: number; failing: number; endpointsFailing: number }) => number) =>
    new Gauge({
      name,
      help,
      aggregator: MAX_OR_UNKNOWN,
      registers,
      async collect() {
        const read = await readDeliveries();
        this.set(read ? pick(read) : NaN);
      },
    });
  deliveryGauge("cardflow_webhook_deliveries_pending", "Webhook events queued for delivery, over every endpoint", (d) => d.pending);
  deliveryGauge("cardflow_webhook_deliveries_failing", "Payments whose next webhook event failed to deliver and is being retried (backoff)", (d) => d.failing);
  deliveryGauge("cardflow_webhook_endpoints_failing", "Webhook endpoints marked failing (an event still undelivered past the retry horizon)", (d) => d.endpointsFailing);
}

/** Read from the delivery state every endpoint keeps in the read-model store (src/webhooks/delivery.ts). */
async function webhookDeliveries({ readModels }: Engine): Promise<{ pending: number; failing: number; endpointsFailing: number }> {
  const endpoints = await readModels.list<EndpointDoc>(FEED.endpoints, "");
  let pending = 0;
  let failing = 0;
  let endpointsFailing = 0;
  for (const endpoint of endpoints) {
    if (endpoint.status === "deleted") continue;
    if (endpoint.status === "failing") endpointsFailing++;
    const state = await readModels.get<DeliveryState>(`webhook_delivery:${endpoint.endpoint_id}`, "state");
    for (const stream of Object.values(state?.pending ?? {})) {
      pending += stream.queue.length;
      if (stream.attempts > 0) failing++;
    }
  }
  return { pending, failing, endpointsFailing };
}
