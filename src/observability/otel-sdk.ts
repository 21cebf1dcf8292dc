// The server's tracing SDK: with OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)
// set, OpenTelemetry's Node SDK is started and exports spans over OTLP/HTTP, configured by the
// standard OTEL_* variables (protocol, headers, sampler, service name: cardflow unless
// OTEL_SERVICE_NAME, resource attributes). Only traces: metrics are Prometheus's (METRICS_PORT),
// logs are the JSON lines on stdout. Without the variable nothing is loaded and the library's
// spans are the API's no-ops.
export interface Tracing {
  /** Exports what is buffered, then stops. */
  shutdown(): Promise<void>;
}

export async function startTracingFromEnv(env: NodeJS.ProcessEnv = process.env): Promise<Tracing | null> {
  if (!env.OTEL_EXPORTER_OTLP_ENDPOINT && !env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return null;
  // loaded on demand: the SDK and its exporters weigh more than the rest of the server
  const { NodeSDK } = await import("@opentelemetry/sdk-node");
  const sdk = new NodeSDK({
    ...(env.OTEL_SERVICE_NAME ? {} : { serviceName: "cardflow" }),
    instrumentations: [],
    metricReaders: [],
    logRecordProcessors: [],
  });
  sdk.start();
  return { shutdown: () => sdk.shutdown() };
}
