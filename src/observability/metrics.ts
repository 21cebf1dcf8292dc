// The service's Prometheus metrics (prom-client), one registry per server. Labels are bounded
// sets only (route templates, methods, status codes, command, processor and call names, outcome
// codes): never an account, a payment, a key or a URL. The decorators of the ports
// (./instrument-*.ts) and the HTTP hooks (./http.ts) record into them; the gauges read when
// Prometheus scrapes (./service-gauges.ts).
import { createRequire } from "node:module";
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry, type Aggregator } from "prom-client";
import { CardflowError } from "../errors.js";

/**
 * How `serve --workers`' primary aggregates the gauges read from the store (../serve/service-gauges.ts):
 * the largest worker's figure (each reads the same store), or NaN when a worker's is unknown. A
 * worker's NaN reaches the primary as null (its metrics come as JSON), which prom-client's "max"
 * reads as 0: a store away would show a lag of 0 again. Defined when this module loads, in the
 * primary too (src/serve/cluster.ts imports it), with prom-client's own factory (grouping by labels;
 * its `aggregators` are the table AggregatorRegistry looks names up in).
 */
export const MAX_OR_UNKNOWN = "cardflow_max_or_unknown" as Aggregator;
const { aggregators, AggregatorFactory } = createRequire(import.meta.url)("prom-client/lib/metricAggregators.js") as {
  aggregators: Record<string, unknown>;
  AggregatorFactory(fn: (values: { value: number | null }[]) => number): unknown;
};
aggregators[MAX_OR_UNKNOWN] = AggregatorFactory((values) =>
  values.some((v) => typeof v.value !== "number" || Number.isNaN(v.value)) ? NaN : Math.max(...values.map((v) => v.value!)),
);

/** Request and call latencies: from a cached status read (~1 ms) to the 120 s blocking auth. */
const SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120];
/** Events per append: one command appends 1 to 3; an import or a bulk load, more. */
const BATCH = [1, 2, 3, 5, 10, 25, 100, 500, 1000];

export interface MetricsOptions {
  /** Node's default metrics too (event-loop delay, heap, GC, CPU, handles): on for a served process. */
  defaults?: boolean;
}

export function createMetrics({ defaults = false }: MetricsOptions = {}) {
  const registry = new Registry();
  if (defaults) collectDefaultMetrics({ register: registry });
  const registers = [registry];

  return {
    registry,
    httpRequests: new Counter({ name: "cardflow_http_requests_total", help: "HTTP requests answered, by route template, method and status", labelNames: ["route", "method", "status"], registers }),
    httpDuration: new Histogram({ name: "cardflow_http_request_duration_seconds", help: "Time from a request's arrival to its answer, by route template and method", labelNames: ["route", "method"], buckets: SECONDS, registers }),
    httpClientErrors: new Counter({ name: "cardflow_http_client_errors_total", help: "Requests Node's HTTP parser refused before any route saw them (408 too slow, 414 URL too long, 431 headers too large, 400 not HTTP), by status", labelNames: ["status"], registers }),
    rateLimited: new Counter({ name: "cardflow_rate_limit_refusals_total", help: "Requests refused with 429 (too many failed authentications, or another limit), by route template", labelNames: ["route"], registers }),
    commands: new Counter({ name: "cardflow_commands_total", help: "Engine commands, by command and outcome (ok, or the error code answered)", labelNames: ["command", "outcome"], registers }),
    commandDuration: new Histogram({ name: "cardflow_command_duration_seconds", help: "Engine command latency, by command", labelNames: ["command"], buckets: SECONDS, registers }),
    processorCalls: new Counter({ name: "cardflow_processor_calls_total", help: "Processor calls, by processor, call and outcome (the answer's kind, refused: the processor did nothing, error: outcome unknown)", labelNames: ["processor", "call", "outcome"], registers }),
    processorDuration: new Histogram({ name: "cardflow_processor_call_duration_seconds", help: "Processor call latency, by processor and call", labelNames: ["processor", "call"], buckets: SECONDS, registers }),
    appendDuration: new Histogram({ name: "cardflow_store_append_duration_seconds", help: "Event store append latency (one stream, one transaction)", buckets: SECONDS, registers }),
    appendBatch: new Histogram({ name: "cardflow_store_append_batch_size", help: "Events per append", buckets: BATCH, registers }),
    appendFailures: new Counter({ name: "cardflow_store_append_failures_total", help: "Appends refused or failed: conflict (expected revision, another writer won), unavailable (the database), error", labelNames: ["reason"], registers }),
    idempotencyReplays: new Counter({ name: "cardflow_idempotency_replays_total", help: "Requests answered with the recorded answer of an earlier request with the same Idempotency-Key", registers }),
    idempotencyConflicts: new Counter({ name: "cardflow_idempotency_conflicts_total", help: "Idempotency-Key refusals: in_use (409, the first request still runs), reused (422, another request)", labelNames: ["reason"], registers }),
    reconcilePasses: new Counter({ name: "cardflow_reconciler_passes_total", help: "Reconciler passes, by outcome (ok, failed)", labelNames: ["outcome"], registers }),
    reconcileResolved: new Counter({ name: "cardflow_reconciler_resolved_total", help: "Attempts without outcome resolved by the reconciler (outcome events or AttemptAbandoned appended)", registers }),
    lateAnswers: new Counter({ name: "cardflow_late_answers_total", help: "Processor answers recorded after their call was abandoned as never received (a call slower than RECONCILE_GRACE_MS)", registers }),
    lateAnswersUnapplied: new Counter({ name: "cardflow_late_answers_unapplied_total", help: "Late answers the payment no longer takes, recorded for an operator (LateAnswerUnapplied: money moved at the processor that the payment does not show)", registers }),
    // the store's, not the process's: under --workers the primary shows one worker's, not their sum
    reconcileOpen: new Gauge({ name: "cardflow_reconciler_open_attempts", help: "Processor calls without outcome (attempts, and terminal collections) after the last reconciler pass", registers, aggregator: "max" }),
    reconcileOldest: new Gauge({ name: "cardflow_reconciler_oldest_open_attempt_seconds", help: "Age of the oldest processor call without outcome at the last reconciler pass (0 when none)", registers, aggregator: "max" }),
    shuttingDown: new Gauge({ name: "cardflow_shutting_down", help: "1 from SIGTERM/SIGINT until the process exits (readiness fails meanwhile)", registers, aggregator: "max" }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

/** An outcome label from an error: its code when it is one of ours (a bounded set), else "error". */
export function outcomeOf(error: unknown): string {
  // CardflowError codes are literals of this code base or an adapter's; a driver's code is "error"
  return error instanceof CardflowError && /^[a-z][a-z_]{0,47}$/.test(error.code) ? error.code : "error";
}
