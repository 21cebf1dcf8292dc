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
// SHUTDOWN_DEADLINE_MS exits 1. A second signal ends the grace at once, if it comes
// SECOND_SIGNAL_AFTER_MS or more after the first: a signal to the process group (Ctrl+C,
// systemd's KillMode=control-group) reaches node twice, from the group and forwarded by npm.
import type { Logger } from "pino";
import { STOP_MARGIN_MS, type ServeConfig } from "./config.js";
import type { Service } from "./service.js";

/** The primary's messages to a worker (src/serve/cluster.ts): stop (it got a signal), end the grace (it got a second one). */
export const WORKER_STOP = "cardflow:stop";
export const WORKER_END_GRACE = "cardflow:end-grace";
/** A worker's exit code when it refuses to go on (a sandbox whose store production came to): the primary starts no other (EX_CONFIG). */
export const WORKER_REFUSED_EXIT = 78;

/** A signal sooner than this after the first is the same one delivered twice (by the process group and by npm): not a second signal. */
export const SECOND_SIGNAL_AFTER_MS = 1_000;

/** Tells, for each signal, whether it repeats the first: it comes less than SECOND_SIGNAL_AFTER_MS after it (the first itself does not). */
export function repeatsOfFirstSignal(now: () => number = () => performance.now()): () => boolean {
  let first: number | undefined;
  return () => {
    if (first === undefined) {
      first = now();
      return false;
    }
    return now() - first < SECOND_SIGNAL_AFTER_MS;
  };
}

export function stopOnSignals(service: Service, serve: ServeConfig, logger: Logger, exit: (code: number) => void = (code) => process.exit(code)): void {
  let stopping = false;
  const repeatsFirst = repeatsOfFirstSignal();
  let endGrace: () => void = () => undefined;

  async function stop(reason: string) {
    const started = Date.now();
    stopping = true;
    service.metrics.shuttingDown.set(1);
    service.app.drain.startDraining();
    logger.info({ reason, grace_ms: serve.shutdownGraceMs, deadline_ms: serve.shutdownDeadlineMs }, "shutting down: /readyz fails, requests are served until the grace ends");
    const cut = setTimeout(() => {
      const requests = service.app.drain.abort();
      if (requests > 0) logger.warn({ requests }, "shutdown deadline: requests still running were answered 503 (their processor calls are left to the reconciler)");
    }, serve.shutdownDeadlineMs - STOP_MARGIN_MS);
    /** What the stop waits for now: said if the deadline passes. */
    let step = "the grace";
    const hard = setTimeout(() => {
      logger.error({ step }, `shutdown deadline passed with the stop unfinished (waiting for ${step})`);
      exit(1);
    }, serve.shutdownDeadlineMs);
    try {
      await new Promise<void>((resolve) => {
        endGrace = resolve;
        setTimeout(resolve, serve.shutdownGraceMs);
      });
      // every connection the kernel queued is accepted first: closing the listener would reset them
      step = "the connections queued by the kernel";
      const drained = await service.app.drain.acceptQueueDrained(started + serve.shutdownDeadlineMs - STOP_MARGIN_MS);
      const closing = service.app.close();
      logger.info({ in_flight: service.app.drain.inFlight(), accept_queue_drained: drained }, "listener closed: answering the requests in flight");
      step = "the requests in flight";
      await closing;
      clearTimeout(cut);
      await service.stopBackground((part) => void (step = part), started + serve.shutdownDeadlineMs - STOP_MARGIN_MS);
      clearTimeout(hard);
      logger.info("stopped");
      exit(0);
    } catch (err) {
      logger.error({ err }, "shutdown failed");
      exit(1);
    }
  }

  // A worker may get a signal twice over: from the primary's relay and from its process group
  // (Ctrl+C, systemd's default KillMode): only a second signal the worker itself got ends the grace,
  // and only one a moment after the first (npm forwards the group's signal to a process that got it too).
  let signalled = false;
  const onSignal = (signal: NodeJS.Signals) => {
    const repeat = repeatsFirst();
    if (!signalled) {
      signalled = true;
      if (!stopping) void stop(signal);
    } else if (repeat) logger.info({ signal }, "the first signal again (from the process group and from npm): the grace goes on");
    else {
      logger.info({ signal }, "second signal: the grace ends now");
      endGrace();
    }
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  process.on("message", (message: unknown) => {
    if (message === WORKER_STOP && !stopping) void stop("primary");
    if (message === WORKER_END_GRACE) endGrace();
  });
}
