// OpenTelemetry traces through @opentelemetry/api only: without an SDK registered (a library
// user's own, or the server's when OTEL_EXPORTER_OTLP_ENDPOINT is set: ./otel-sdk.ts) every call
// here is the API's no-op. Spans: the HTTP request (./http.ts) > the engine command
// (./instrument-engine.ts) > store appends, processor calls and read-model catch-up commits
// (./instrument-ports.ts), which are only traced inside a trace (a child of an active span).
// Attributes name the payment, the command, the outcome: never card data, keys or secrets.
import { context, SpanStatusCode, trace, type Attributes, type Span } from "@opentelemetry/api";
import { packageVersion } from "../package-root.js";

export const tracer = trace.getTracer("cardflow", packageVersion);

/** Attribute names (cardflow's own namespace, beside OpenTelemetry's semantic conventions). */
export const ATTR = {
  paymentId: "cardflow.payment_id",
  command: "cardflow.command",
  outcome: "cardflow.outcome",
  requestId: "cardflow.request_id",
  processor: "cardflow.processor",
  call: "cardflow.processor.call",
  stream: "cardflow.stream",
  events: "cardflow.events",
  eventTypes: "cardflow.event_types",
  position: "cardflow.position",
  projections: "cardflow.projections",
} as const;

/** A span under the active one, or undefined outside a trace (then nothing is allocated). */
export function childSpan(name: string, attributes?: Attributes): Span | undefined {
  const active = context.active();
  if (!trace.getSpan(active)?.isRecording()) return undefined;
  return tracer.startSpan(name, { attributes }, active);
}

/** Runs `fn` with `span` active, so what it calls is traced under it. */
export function withSpan<T>(span: Span, fn: () => Promise<T>): Promise<T> {
  return context.with(trace.setSpan(context.active(), span), fn);
}

/** Ends a span with its outcome: ok, or the error (its code as the outcome; the message only when it is ours). */
export function endSpan(span: Span, outcome: string, error?: unknown): void {
  span.setAttribute(ATTR.outcome, outcome);
  if (error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: outcome });
  span.end();
}
