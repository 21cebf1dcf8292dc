// The workers' metrics summed for the primary's METRICS_PORT, asked over prom-client's cluster
// messages (each worker answers them: ./run.ts). prom-client's own clusterMetrics() sums the live
// workers only, so when a worker died and another took its place the summed counters went
// backwards, which Prometheus reads as a counter reset (a false spike in rate() and increase()).
// The primary keeps each worker's last answer, and adds a dead worker's counters and histograms to
// every later sum: a summed counter never goes down (what a worker counted after its last scrape
// is lost with it). A dead worker's gauges are dropped: they described a process that is gone.
import cluster, { type Worker } from "node:cluster";
import { AggregatorRegistry, type Registry } from "prom-client";
// the aggregators the workers' gauges name (MAX_OR_UNKNOWN), defined when it loads
import "../observability/metrics.js";

type Metrics = Awaited<ReturnType<Registry["getMetricsAsJSON"]>>;

const REQUEST = "prom-client:getMetricsReq";
const ANSWER = "prom-client:getMetricsRes";
/** How long a scrape waits for every live worker's answer. */
const ANSWER_MS = 5_000;

export function clusterMetrics() {
  const last = new Map<number, Metrics>();
  /** The dead workers' counters and histograms, summed. */
  let retired: Metrics = [];
  /** A dead worker's counts being added to `retired` (a scrape waits for it: else its sum dips). */
  let retiring = Promise.resolve();
  let nextId = 0;
  const scrapes = new Map<number, { waiting: Set<number>; settle(error?: Error): void }>();

  cluster.on("message", (worker: Worker, message: { type?: string; requestId?: number; metrics?: Metrics[]; error?: string }) => {
    const scrape = message?.type === ANSWER ? scrapes.get(message.requestId!) : undefined;
    if (!scrape) return;
    if (message.error) return scrape.settle(new Error(message.error));
    last.set(worker.id, message.metrics!.flat());
    scrape.waiting.delete(worker.id);
    if (scrape.waiting.size === 0) scrape.settle();
  });

  cluster.on("exit", (worker: Worker) => {
    const counted = last.get(worker.id)?.filter((m) => ["counter", "histogram"].includes(String(m.type)));
    last.delete(worker.id);
    if (counted?.length) retiring = retiring.then(async () => void (retired = await AggregatorRegistry.aggregate([retired, counted]).getMetricsAsJSON()));
    // a scrape waiting for it has its answer from the others
    for (const scrape of scrapes.values()) if (scrape.waiting.delete(worker.id) && scrape.waiting.size === 0) scrape.settle();
  });

  async function metrics(): Promise<string> {
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined && w.isConnected());
    const requestId = nextId++;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => settle(new Error("Operation timed out.")), ANSWER_MS);
      const settle = (error?: Error) => {
        clearTimeout(timer);
        scrapes.delete(requestId);
        if (error) reject(error);
        else resolve();
      };
      scrapes.set(requestId, { waiting: new Set(workers.map((w) => w.id)), settle });
      for (const worker of workers) worker.send({ type: REQUEST, requestId });
      if (workers.length === 0) settle();
    });
    await retiring;
    return AggregatorRegistry.aggregate([...workers.map((w) => last.get(w.id) ?? []), retired]).metrics();
  }

  return { contentType: AggregatorRegistry.PROMETHEUS_CONTENT_TYPE, metrics };
}
