// Fair turns of the event loop under load. Node runs, in one turn of its loop, every request whose
// bytes arrived during that turn's poll: with 64 busy clients a turn held about 64 requests (25 ms
// on a 2-core machine) and no timer fired meanwhile (a deadline, a lease's renewal, a stream's
// heartbeat). Here each request is let in by a callback of its own in the turn's check phase
// (setImmediate), in arrival order. Node runs a callback's microtasks before the next callback,
// so the time since the phase began is the work of what this turn ran. Once that passes the slice,
// the rest wait for the next turn, ahead of later arrivals. Every turn lets in at least one
// request, and an idle server lets a request in within the turn it arrived in.
import type { FastifyInstance, FastifyReply } from "fastify";
import { performance } from "node:perf_hooks";

/** A turn's work before the requests still waiting go to the next turn. */
export const TURN_SLICE_MS = 10;

export function fairTurns(app: FastifyInstance, sliceMs = TURN_SLICE_MS): void {
  let sliceBegan = 0;
  let letInThisTurn = 0;
  let waiting = 0;
  /** A callback that begins the next turn's slice is queued, ahead of every request waiting. */
  let sliceQueued = false;
  function beginSlice() {
    sliceBegan = performance.now();
    letInThisTurn = 0;
    // queued now, it runs first in the next turn: what this turn queues for that one (a group
    // commit of the appends made here) counts in that turn's slice
    if (waiting > 0) setImmediate(beginSlice);
    else sliceQueued = false;
  }
  function letIn(go: () => void, reply: FastifyReply) {
    if (letInThisTurn > 0 && performance.now() - sliceBegan > sliceMs) {
      setImmediate(letIn, go, reply);
      return;
    }
    waiting--;
    letInThisTurn++;
    // answered while it waited (503 at the stop's deadline: src/http/drain.ts): never run
    if (!reply.sent) go();
  }
  app.addHook("onRequest", (_req, reply, done) => {
    waiting++;
    if (!sliceQueued) {
      sliceQueued = true;
      setImmediate(beginSlice);
    }
    setImmediate(letIn, done, reply);
  });
}
