// The graceful stop of a served process, on SIGTERM or SIGINT (or, in a worker of
// `serve --workers`, the primary's word):
// 1. /readyz fails at once; every request is still served for SHUTDOWN_GRACE_MS, so a load
//    balancer takes the process out of rotation before anything is refused;
// 2. the listener closes (new connections are refused); requests in flight are answered,
//    connections already accepted are served and ended cleanly, server-sent event streams end
//    with a final event (src/http/drain.ts);
// 3. webhook delivery state is flushed, the reconciler's pass under way ends, the store closes,
//    buffered spans are exported; exit 0.
// A processor call still running is left to the reconciler: its attempt is recorded. At the
// deadline less a second, requests still running are answered 503 (retry with the same
// Idempotency-Key) so the rest of the stop has that second; a stop still hanging at
// SHUTDOWN_DEADLINE_MS exits 1. A second signal ends the grace at once.
import type { Logger } from "pino";
import { STOP_MARGIN_MS, type ServeConfig } from "./config.js";
import type { Service } from "./service.js";

/** The primary's messages to a worker (src/serve/cluster.ts). */
export const WORKER_STOP = "cardflow:stop";

export function stopOnSignals(service: Service, serve: ServeConfig, logger: Logger, exit: (code: number) => void = (code) => process.exit(code)): void {
  let stopping = false;
  let endGrace: () => void = () => undefined;

  async function stop(reason: string) {
    stopping = true;
    service.metrics.shuttingDown.set(1);
    service.app.drain.startDraining();
    logger.info({ reason, grace_ms: serve.shutdownGraceMs, deadline_ms: serve.shutdownDeadlineMs }, "shutting down: /readyz fails, requests are served until the grace ends");
    const cut = setTimeout(() => {
      const requests = service.app.drain.abort();
      logger.warn({ requests }, "shutdown deadline: requests still running were answered 503 (their processor calls are left to the reconciler)");
    }, serve.shutdownDeadlineMs - STOP_MARGIN_MS);
    const hard = setTimeout(() => {
      logger.error("shutdown deadline passed with the stop unfinished");
      exit(1);
    }, serve.shutdownDeadlineMs);
    try {
      await new Promise<void>((resolve) => {
        endGrace = resolve;
        setTimeout(resolve, serve.shutdownGraceMs);
      });
      logger.info({ in_flight: service.app.drain.inFlight() }, "closing the listener: answering the requests in flight");
      await service.app.close();
      clearTimeout(cut);
      await service.stopBackground();
      clearTimeout(hard);
      logger.info("stopped");
      exit(0);
    } catch (err) {
      logger.error({ err }, "shutdown failed");
      exit(1);
    }
  }

  const onSignal = (signal: NodeJS.Signals) => {
    if (!stopping) return void stop(signal);
    logger.info({ signal }, "second signal: the grace ends now");
    endGrace();
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  // a worker: the primary relays the signal it got (the worker may have had it too: Ctrl+C)
  process.on("message", (message: unknown) => {
    if (message === WORKER_STOP && !stopping) void stop("primary");
  });
}
