// Decorators of the ports the engine is built on: the event store (append latency, batch size,
// failures; a span per append), the read-model store (a span per catch-up commit) and the
// processors (calls by processor, call and outcome, latency; a span per call). Each returns an
// object that behaves as the one it wraps (everything else is inherited from it), so the engine
// is instrumented without a line of it changed.
import type { Processor } from "../../machines/events.js";
import { IdempotencyKeyInUse, IdempotencyKeyReused, type Idempotency } from "../idempotency.js";
import type { ProcessorPort, Processors } from "../processors/port.js";
import { IdempotencyClaimLost, StoreUnavailable, WrongExpectedRevision, type EventStore, type ReadModelStore } from "../store/port.js";
import { recordCommand } from "./instrument-engine.js";
import { outcomeOf, type Metrics } from "./metrics.js";
import { ATTR, childSpan, endSpan } from "./tracing.js";

/** `target` with some members replaced: the rest (methods, optional members) found on it. */
function decorate<T extends object>(target: T, overrides: Partial<T>): T {
  return Object.assign(Object.create(target) as T, overrides);
}

/** Children of a labelled metric by one varying label, created once each (no label hashing per call). */
function byLabel<C>(child: (value: string) => C): (value: string) => C {
  const children = new Map<string, C>();
  return (value) => {
    let c = children.get(value);
    if (!c) children.set(value, (c = child(value)));
    return c;
  };
}

const seconds = (startedMs: number) => (performance.now() - startedMs) / 1000;

function appendFailure(error: unknown): string {
  if (error instanceof WrongExpectedRevision) return "conflict";
  if (error instanceof StoreUnavailable) return "unavailable";
  if (error instanceof IdempotencyClaimLost) return "claim_lost";
  return "error";
}

export function instrumentStore(store: EventStore, metrics: Metrics): EventStore {
  const failures = byLabel((reason) => metrics.appendFailures.labels(reason));
  return decorate(store, {
    async append(stream, events, options) {
      const span = childSpan("cardflow.store.append");
      const started = performance.now();
      try {
        const result = await store.append(stream, events, options);
        metrics.appendDuration.observe(seconds(started));
        metrics.appendBatch.observe(events.length);
        // a call slower than the reconciler's grace: the operator raises RECONCILE_GRACE_MS (README)
        if (events[0]?.metadata.late_answer_to !== undefined) metrics.lateAnswers.inc();
        if (events[0]?.type === "LateAnswerUnapplied") metrics.lateAnswersUnapplied.inc();
        if (span) {
          span.setAttributes({ [ATTR.stream]: stream, [ATTR.events]: events.length, [ATTR.eventTypes]: events.map((e) => e.type), [ATTR.position]: result.position });
          endSpan(span, "ok");
        }
        return result;
      } catch (error) {
        const reason = appendFailure(error);
        failures(reason).inc();
        if (span) endSpan(span, reason, error);
        throw error;
      }
    },
  });
}

export function instrumentReadModels(readModels: ReadModelStore): ReadModelStore {
  return decorate(readModels, {
    async commitBatch(commits) {
      const span = childSpan("cardflow.read_models.catch_up");
      if (!span) return readModels.commitBatch(commits);
      span.setAttributes({ [ATTR.projections]: commits.map((c) => c.projection), [ATTR.position]: Math.max(0, ...commits.map((c) => c.checkpoint)) });
      try {
        await readModels.commitBatch(commits);
        endSpan(span, "ok");
      } catch (error) {
        endSpan(span, outcomeOf(error), error);
        throw error;
      }
    },
  });
}

type Call = keyof ProcessorPort;
const CALLS: readonly Call[] = ["chargeStoredCard", "startTerminalAuthorization", "cancelTerminalAuthorization", "readCardFromClient", "authorizeCollectedCard", "capture", "void", "refund", "saveCard", "lookup", "retrieveStoredCard"];

/** The outcome label of an answer: an authorization's kind, else ok. */
const answerOutcome = (answer: unknown) => {
  const kind = (answer as { kind?: unknown } | null | undefined)?.kind;
  return typeof kind === "string" ? kind : "ok";
};

function instrumentPort(port: ProcessorPort, processor: string, metrics: Metrics): ProcessorPort {
  const overrides: Partial<Record<Call, unknown>> = {};
  for (const call of CALLS) {
    const original = port[call] as (req: unknown) => Promise<unknown>;
    const calls = byLabel((outcome) => metrics.processorCalls.labels(processor, call, outcome));
    const duration = metrics.processorDuration.labels(processor, call);
    overrides[call] = async (req: unknown) => {
      const span = childSpan(`cardflow.processor.${call}`);
      if (span) {
        // the payment's id only: the request also holds card data (readCardFromClient)
        const paymentId = (req as { payment?: { intent?: { payment_id?: string } } } | undefined)?.payment?.intent?.payment_id;
        span.setAttributes({ [ATTR.processor]: processor, [ATTR.call]: call, ...(paymentId ? { [ATTR.paymentId]: paymentId } : {}) });
      }
      const started = performance.now();
      try {
        const answer = await original.call(port, req);
        duration.observe(seconds(started));
        const outcome = answerOutcome(answer);
        calls(outcome).inc();
        if (span) endSpan(span, outcome);
        return answer;
      } catch (error) {
        duration.observe(seconds(started));
        const outcome = outcomeOf(error);
        calls(outcome).inc();
        if (span) endSpan(span, outcome, error);
        throw error;
      }
    };
  }
  return decorate(port, overrides as Partial<ProcessorPort>);
}

/** The processors' calls instrumented, and what they report later recorded as the command `report`. */
export function instrumentProcessors(processors: Processors, metrics: Metrics): Processors {
  const ports = new Map<Processor, ProcessorPort>();
  return decorate(processors, {
    connect(report) {
      processors.connect(recordCommand("report", report, metrics));
    },
    get(processor) {
      let port = ports.get(processor);
      if (!port) ports.set(processor, (port = instrumentPort(processors.get(processor), processor, metrics)));
      return port;
    },
  });
}

/** Idempotency-Key answers: replays counted, and refusals by reason (in_use 409, reused 422). */
export function instrumentIdempotency(idempotency: Idempotency, metrics: Metrics): Idempotency {
  const inUse = metrics.idempotencyConflicts.labels("in_use");
  const reused = metrics.idempotencyConflicts.labels("reused");
  return decorate(idempotency, {
    async run(request, execute, present) {
      try {
        const answer = await idempotency.run(request, execute, present);
        if (answer.replayed) metrics.idempotencyReplays.inc();
        return answer;
      } catch (error) {
        if (error instanceof IdempotencyKeyInUse) inUse.inc();
        else if (error instanceof IdempotencyKeyReused) reused.inc();
        throw error;
      }
    },
  });
}
