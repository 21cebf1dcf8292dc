// What a start refuses before any store is made or opened: a port another process holds, a host
// not of this machine, and the settings read only once the stores are open (the processors', the
// webhooks', the outbound CA file). Each of those refused after the stores made a whole new store
// first, which a later read-only command read as an empty, clean store. Run by the served process
// (./service.ts) and by the primary of `serve --workers` before it starts any worker (./cluster.ts).
import { createServer as createNetServer } from "node:net";
import { outboundOf, type ServiceConfig } from "../config.js";
import { checkProcessorSettings } from "../processors/adapters.js";
import { configuredSigningKey, webhookConfigFromEnv } from "../webhooks/config.js";
import { listenFailure, type ServeConfig } from "./config.js";

/** Why the service could not start, said in one line (a port in use): exit 1 without a stack trace. */
export class StartFailure extends Error {
  override readonly name = "StartFailure";
  /** The API's port was taken (the caller says how to choose another). */
  constructor(message: string, readonly apiPortTaken = false) {
    super(message);
  }
}

/** A listener refused, as the start says it: a port another process holds, or a host or port that cannot be listened on. */
export function apiRefusal(error: unknown, config: ServiceConfig, { listenFrom }: ServeConfig): unknown {
  if ((error as NodeJS.ErrnoException).code !== "EADDRINUSE") return listenFailure(error, [listenFrom.host, config.host], [listenFrom.port, config.port]);
  return new StartFailure(`port ${config.port} on ${config.host} is already in use (another cardflow, or another service?)`, true);
}
export function metricsRefusal(error: unknown, serve: ServeConfig): unknown {
  if ((error as NodeJS.ErrnoException).code !== "EADDRINUSE") return listenFailure(error, ["METRICS_HOST", serve.metricsHost], ["METRICS_PORT", serve.metricsPort]);
  return new StartFailure(`METRICS_PORT ${serve.metricsPort} on ${serve.metricsHost} is already in use (another cardflow on this host?); give each process its own METRICS_PORT, or METRICS_PORT=0 for none`);
}

/** Whether `port` on `host` can be listened on now: tried and closed at once (port 0 too: the host is checked). */
const tryListen = (port: number, host: string) =>
  new Promise<void>((resolve, reject) => {
    const probe = createNetServer().once("error", reject);
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve()));
  });

/** The first port after `port` that this host lets one listen on now and that is not `metricsPort` (so the example given works), else port + 1. */
async function freePortAfter(host: string, port: number, metricsPort: number): Promise<number> {
  const free = (p: number) => tryListen(p, host).then(() => true, () => false);
  for (let p = port + 1; p <= Math.min(port + 100, 65535); p++) if (p !== metricsPort && (await free(p))) return p;
  return port + 1;
}

/** How the person starting the service chooses another port (`port`: a free one to give as the example). */
export type PortHint = (port: number) => string;

/** A refusal of the start, the API's port taken said with another to choose (every way the service starts). */
export async function withPortHint(error: unknown, config: ServiceConfig, serve: ServeConfig, portHint: PortHint): Promise<unknown> {
  return error instanceof StartFailure && error.apiPortTaken ? `${error.message}; choose another with ${portHint(await freePortAfter(config.host, config.port, serve.metricsPort))}` : error;
}

/**
 * The refusals above, in the order a start meets them; `listeners: false` for a worker of `serve
 * --workers` (its ports are its primary's). Answers what the stores' start goes on with.
 */
/** What the refusals before any store found: the settings the service goes on with. */
export type StartChecks = Awaited<ReturnType<typeof refusalsBeforeStores>>;

export async function refusalsBeforeStores(config: ServiceConfig, serve: ServeConfig, { listeners = true, env = process.env } = {}) {
  if (listeners) {
    await tryListen(config.port, config.host).catch((error: unknown) => Promise.reject(apiRefusal(error, config, serve)));
    if (serve.metricsPort !== 0) await tryListen(serve.metricsPort, serve.metricsHost).catch((error: unknown) => Promise.reject(metricsRefusal(error, serve)));
  }
  await checkProcessorSettings(config, env);
  const webhookSettings = webhookConfigFromEnv(env);
  configuredSigningKey(env);
  return { webhookSettings, outbound: outboundOf(config) };
}
