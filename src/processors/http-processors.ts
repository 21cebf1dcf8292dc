// A complete PROCESSORS_MODULE: processors A and B each behind the example HTTP adapter
// (./http-adapter.ts), configured from the environment. Use it as it is
// (PROCESSORS_MODULE=<cardflow>/dist/src/processors/http-processors.js) against a processor that
// speaks that API, or copy it as the start of your own module.
//   PROCESSOR_A_URL, PROCESSOR_A_API_KEY, PROCESSOR_B_URL, PROCESSOR_B_API_KEY (required)
//   PROCESSOR_TIMEOUT_MS (20000), PROCESSOR_POLL_MS (1000: how often late outcomes are asked for)
import { ConfigurationError } from "../config.js";
import type { AdapterContext, ProcessorAdapters } from "./adapters.js";
import { createHttpProcessor } from "./http-adapter.js";

export function createProcessors({ outbound, clock, env }: AdapterContext): ProcessorAdapters {
  const required = (name: string) => {
    const value = env[name];
    if (!value) throw new ConfigurationError(`${name}: required by the HTTP processor adapters (src/processors/http-processors.ts)`);
    return value;
  };
  const number = (name: string, fallback: number) => (env[name] ? Number(env[name]) : fallback);
  const adapter = (p: "A" | "B") =>
    createHttpProcessor({
      outbound,
      clock,
      baseUrl: required(`PROCESSOR_${p}_URL`),
      apiKey: required(`PROCESSOR_${p}_API_KEY`),
      timeoutMs: number("PROCESSOR_TIMEOUT_MS", 20_000),
      pollMs: number("PROCESSOR_POLL_MS", 1_000),
      onError: (error) => process.stderr.write(`cardflow: processor ${p}: late outcomes not read: ${error instanceof Error ? error.message : String(error)}\n`),
    });
  const A = adapter("A");
  const B = adapter("B");
  return {
    A,
    B,
    connect(report) {
      A.connect(report);
      B.connect(report);
    },
    close() {
      A.close();
      B.close();
    },
  };
}
