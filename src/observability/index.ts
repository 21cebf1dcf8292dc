// Observability in one call for whoever composes an engine (the served process, benchmarks, a
// library user who wants cardflow's metrics): the engine over instrumented ports, its commands
// instrumented, and what the HTTP server takes to record requests (createServer's `metrics`,
// `notes`). Spans need no setup here: they go to whatever OpenTelemetry SDK is registered.
import { createEngine, type Engine, type EngineOptions } from "../engine.js";
import { createMemoryReadModels, createMemoryStore } from "../store/memory/index.js";
import { createSimulators } from "../processors/simulator.js";
import { systemClock } from "../clock.js";
import { randomIds } from "../ids.js";
import { instrumentEngine, type RequestNotes } from "./instrument-engine.js";
import { instrumentProcessors, instrumentReadModels, instrumentStore } from "./instrument-ports.js";
import { createMetrics, type Metrics, type MetricsOptions } from "./metrics.js";

export interface Observed {
  engine: Engine;
  metrics: Metrics;
  notes: RequestNotes;
}

/** createEngine(options), with its store, read models, processors and commands instrumented. */
export function createObservedEngine(options: EngineOptions = {}, metricsOptions: MetricsOptions = {}): Observed {
  const metrics = createMetrics(metricsOptions);
  const notes: RequestNotes = new Map();
  const clock = options.clock ?? systemClock;
  const ids = options.ids ?? randomIds();
  const engine = createEngine({
    ...options,
    clock,
    ids,
    store: instrumentStore(options.store ?? createMemoryStore(), metrics),
    readModels: instrumentReadModels(options.readModels ?? createMemoryReadModels()),
    processors: instrumentProcessors(options.processors ?? createSimulators({ clock, ids }), metrics),
  });
  return { engine: instrumentEngine(engine, metrics, notes), metrics, notes };
}

export { createMetrics, type Metrics } from "./metrics.js";
export type { RequestNotes } from "./instrument-engine.js";
