// The graceful stop of a served process, on SIGTERM or SIGINT (or, in a worker of
// `serve --workers`, the primary's word):
// 1. /readyz fails at once; every request is still served for SHUTDOWN_GRACE_MS, so a load
//    balancer takes the process out of rotation before anything is refused;
// 2. once no connection waits in the listen backlog, the listener closes (new connections are
//    refused); requests in flight are answered,
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

/** The primary's messages to a worker (src/serve/cluster.ts): stop (it got a signal), end the grace (it got a second one). */
export const WORKER_STOP = "cardflow:stop";
export const WORKER_END_GRACE = "cardflow:end-grace";

export function stopOnSignals(service: Service, serve: ServeConfig, logger: Logger, exit: (code: number) => void = (code) => process.exit(code)): void {
  let stopping = false;
  let signals = 0;
  let endGrace: () => void = () => undefined;

  async function stop(reason: string) {
    const started = Date.now();
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
      // every connection the kernel queued is accepted first: closing the listener would reset them
      const drained = await service.app.drain.acceptQueueDrained(started + serve.shutdownDeadlineMs - STOP_MARGIN_MS);
      const closing = service.app.close();
      logger.info({ in_flight: service.app.drain.inFlight(), accept_queue_drained: drained }, "listener closed: answering the requests in flight");
      await closing;
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

  // A worker may get a signal twice over: from the primary's relay and from its process group
  // (Ctrl+C, systemd's default KillMode): only a second signal the worker itself got ends the grace.
  const onSignal = (signal: NodeJS.Signals) => {
    if (++signals > 1) {
      logger.info({ signal }, "second signal: the grace ends now");
      endGrace();
    } else if (!stopping) void stop(signal);
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  process.on("message", (message: unknown) => {
    if (message === WORKER_STOP && !stopping) void stop("primary");
    if (message === WORKER_END_GRACE) endGrace();
  });
}
