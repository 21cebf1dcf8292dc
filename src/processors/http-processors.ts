// A complete PROCESSORS_MODULE: processors A and B each behind the example HTTP adapter
// (./http-adapter.ts), configured from the environment. Use it as it is
// (PROCESSORS_MODULE=<cardflow>/dist/src/processors/http-processors.js) against a processor that
// speaks that API, or copy it as the start of your own module.
//   PROCESSOR_A_URL, PROCESSOR_A_API_KEY, PROCESSOR_B_URL, PROCESSOR_B_API_KEY (required)
//   PROCESSOR_TIMEOUT_MS (20000), PROCESSOR_POLL_MS (1000: how often late outcomes are asked for)
import { ConfigurationError, envNumber, MAX_TIMER_MS } from "../config.js";
import { missingHost, type Outbound } from "../outbound/client.js";
import type { AdapterContext, ProcessorAdapters } from "./adapters.js";
import { createHttpProcessor } from "./http-adapter.js";

/** The module's settings from the environment, each refused naming its variable (a name resolving to a refused address too, with `resolved`). */
async function settingsOf(env: NodeJS.ProcessEnv, outbound: Outbound, resolved: boolean) {
  const required = (name: string) => {
    const value = env[name];
    if (!value) throw new ConfigurationError(`${name}: required by the HTTP processor adapters (src/processors/http-processors.ts)`);
    return value;
  };
  const url = async (name: string) => {
    const value = required(name);
    const refused = URL.canParse(value) ? (missingHost(value) ?? outbound.refusal(value) ?? (resolved ? await outbound.nameRefusal(value) : null)) : `not an absolute URL, got ${JSON.stringify(value)}`;
    if (refused) throw new ConfigurationError(`${name}: ${refused}`);
    return value;
  };
  // whole milliseconds a timer can hold; 0 would fail every call, or never ask for late outcomes
  const milliseconds = (name: string, fallback: number) =>
    envNumber(env, name, fallback, { min: 1, max: MAX_TIMER_MS, integer: true, expected: `a whole number of milliseconds from 1 to ${MAX_TIMER_MS}` });
  const timeoutMs = milliseconds("PROCESSOR_TIMEOUT_MS", 20_000);
  const pollMs = milliseconds("PROCESSOR_POLL_MS", 1_000);
  const processor = async (p: "A" | "B") => ({ baseUrl: await url(`PROCESSOR_${p}_URL`), apiKey: required(`PROCESSOR_${p}_API_KEY`) });
  return { timeoutMs, pollMs, A: await processor("A"), B: await processor("B") };
}

/**
 * Checked before the service opens any store (a refusal writes nothing): each setting, and the
 * processors' host names as they resolve now. One that cannot work would fail every call later,
 * while /readyz says ready.
 */
export async function checkSettings({ env, outbound }: Pick<AdapterContext, "env" | "outbound">): Promise<void> {
  await settingsOf(env, outbound, true);
}

export async function createProcessors({ outbound, clock, env, logger, state }: AdapterContext): Promise<ProcessorAdapters> {
  const { timeoutMs, pollMs, ...processors } = await settingsOf(env, outbound, false);
  const adapter = (p: "A" | "B") =>
    createHttpProcessor({
      outbound,
      clock,
      ...processors[p],
      timeoutMs,
      pollMs,
      // the poll's cursor, kept in the service's store: a restart reads what was reported meanwhile
      state,
      name: p,
      // in the JSON log an operator collects, once per outage (the adapter says when polls start failing, and when they succeed again)
      onError: (err) => logger.warn({ processor: p, err }, `processor ${p}: ${err instanceof Error ? err.message : String(err)}`),
      onRecovered: () => logger.info({ processor: p }, `processor ${p}: late outcomes read again`),
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
