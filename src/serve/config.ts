// How the served process is operated, from the environment (beside src/config.ts, which says what
// it serves): the metrics listener, the shutdown's grace and deadline, readiness's lag bound.
import { ConfigurationError, envNumber, MAX_TIMER_MS } from "../config.js";

export interface ServeConfig {
  /** METRICS_PORT: Prometheus metrics on this port (default 9464; 0: no metrics listener). Never the API's port. */
  metricsPort: number;
  /** METRICS_HOST: where the metrics listener binds (default 127.0.0.1: this host only). */
  metricsHost: string;
  /** SHUTDOWN_GRACE_MS: after SIGTERM/SIGINT, /readyz fails and requests are served this long before the listener closes (default 5 s). */
  shutdownGraceMs: number;
  /** SHUTDOWN_DEADLINE_MS: from the signal, the process has exited by then (default 25 s, under Kubernetes' 30 s). */
  shutdownDeadlineMs: number;
  /** READY_MAX_LAG_SECONDS: /readyz fails while the oldest unprojected event is older (default 30; 0: not checked). */
  readyMaxLagSeconds: number;
  /** STORE_START_WAIT_SECONDS: a start waits this long for a database that cannot be reached (a failover) before refusing (default 60; 0: refuse at once). */
  storeStartWaitSeconds: number;
  /** Where the API's host and port were given, for a refusal's words: HOST and PORT, or `serve`'s --host and --port (CARDFLOW_HOST_FROM, CARDFLOW_PORT_FROM). */
  listenFrom: { host: string; port: string };
}

/** At the deadline less this, requests still running are cut, so the rest of the stop has this long. */
export const STOP_MARGIN_MS = 1_000;

const whole = (env: NodeJS.ProcessEnv, name: string, fallback: number, max = Number.MAX_SAFE_INTEGER): number =>
  envNumber(env, name, fallback, { max, integer: true, expected: `a whole number from 0 to ${max}` });

export function serveConfigFromEnv(env: NodeJS.ProcessEnv = process.env, apiPort?: number): ServeConfig {
  const config: ServeConfig = {
    metricsPort: whole(env, "METRICS_PORT", 9464, 65535),
    metricsHost: env.METRICS_HOST?.trim() || "127.0.0.1",
    // timers: Node runs a longer one at once (the stop would end before its grace)
    shutdownGraceMs: whole(env, "SHUTDOWN_GRACE_MS", 5_000, MAX_TIMER_MS),
    shutdownDeadlineMs: whole(env, "SHUTDOWN_DEADLINE_MS", 25_000, MAX_TIMER_MS),
    readyMaxLagSeconds: whole(env, "READY_MAX_LAG_SECONDS", 30),
    storeStartWaitSeconds: whole(env, "STORE_START_WAIT_SECONDS", 60, 86_400),
    listenFrom: { host: env.CARDFLOW_HOST_FROM || "HOST", port: env.CARDFLOW_PORT_FROM || "PORT" },
  };
  if (config.metricsPort !== 0 && config.metricsPort === apiPort) {
    throw new ConfigurationError(`METRICS_PORT: ${config.metricsPort} is the API's port; metrics are served on a port of their own (default 9464), or not at all with METRICS_PORT=0`);
  }
  if (config.shutdownDeadlineMs < config.shutdownGraceMs + STOP_MARGIN_MS) {
    throw new ConfigurationError(`SHUTDOWN_DEADLINE_MS: ${config.shutdownDeadlineMs} leaves no time to stop after the grace (SHUTDOWN_GRACE_MS ${config.shutdownGraceMs}); give at least ${config.shutdownGraceMs + STOP_MARGIN_MS}`);
  }
  return config;
}

/**
 * A listener that cannot bind, said naming the variables (HOST and PORT, METRICS_HOST and
 * METRICS_PORT): a host that is no address of this host (a name that does not resolve, an address
 * of another machine), a port the process may not bind. Anything else (a port in use: the caller
 * says it) is returned as it is.
 */
export function listenFailure(error: unknown, host: [variable: string, value: string], port: [variable: string, value: number]): unknown {
  const { code, message } = (error ?? {}) as NodeJS.ErrnoException;
  if (code === "EACCES") return new ConfigurationError(`${port[0]}: ${port[1]} on ${host[1]} may not be bound by this process (${message}); ports under 1024 need privileges`);
  if (!["ENOTFOUND", "EAI_AGAIN", "EAI_FAIL", "EAI_NONAME", "EADDRNOTAVAIL", "EAFNOSUPPORT", "EINVAL"].includes(code ?? "")) return error;
  return new ConfigurationError(`${host[0]}: cannot listen on ${JSON.stringify(host[1])} (${message}); give an address of this host (0.0.0.0: every interface)`);
}

/**
 * The address to tell someone on this host (the start banner, the metrics URL): a listener on
 * every address, or on loopback, is reached at localhost (curl and Node try both of its
 * addresses); one on another address there (an IPv6 one in brackets): localhost does not reach it.
 */
export function urlOf(host: string, port: number, path = ""): string {
  const name = ["0.0.0.0", "::", "", "127.0.0.1", "::1"].includes(host) ? "localhost" : host.includes(":") ? `[${host}]` : host;
  return `http://${name}:${port}${path}`;
}
