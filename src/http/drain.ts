// Graceful close of the HTTP server, in the order src/serve/shutdown.ts drives it:
// 1. draining (SIGTERM): /readyz fails, everything else is served as before, keep-alive included
//    (a client that keeps its connection opens no new one that could wait in the listen backlog);
// 2. after the grace, acceptQueueDrained(): until every connection the kernel queued for the
//    listener is accepted (./accept-queue.ts), so closing it resets none;
// 3. app.close(): the listener closes (later connections are refused) and every
//    connection already accepted is kept: a request on it is served and answered with
//    `Connection: close`; idle connections are ended (FIN) once no request has come for `idleMs`.
//    Node's own close() destroys idle keep-alive connections at once, which races a request the
//    client is sending on one (it sees a reset or an empty reply): replaced here. Server-sent
//    event streams end with their final event then (preClose: src/http/routes/event-stream.ts);
// 4. abort() at the deadline: requests still running are answered 503 (retry with the same
//    Idempotency-Key) and every connection is closed.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { FastifyInstance, FastifyReply } from "fastify";
import { acceptQueueDrained } from "./accept-queue.js";
import { RETRY_WITH_KEY } from "../errors.js";
import { HttpProblem } from "./problem.js";

interface Connection {
  /** Requests received and not answered (one at a time without pipelining). */
  requests: number;
  res: ServerResponse | null;
  /** The reply of the request in `res`, for the 503 at the deadline. */
  reply: FastifyReply | null;
}

export interface Drain {
  /** True from startDraining(): readiness fails. */
  readonly draining: boolean;
  /** True once app.close() began: answers carry Connection: close. */
  readonly closing: boolean;
  startDraining(): void;
  /** Resolves when no connection waits to be accepted (true), or at `until` (false); then close at once. */
  acceptQueueDrained(until: number): Promise<boolean>;
  /** Requests received and not answered yet. */
  inFlight(): number;
  /** The deadline: answers what still runs with 503 and closes every connection. Returns how many requests were cut. */
  abort(): number;
}

export function drainOnClose(app: FastifyInstance, { idleMs = 1_000 }: { idleMs?: number } = {}): Drain {
  const connections = new Map<Socket, Connection>();
  let draining = false;
  let closing = false;

  // Ending a connection the client is about to reuse races its request (it sees the socket closed
  // without an answer): idle connections are ended only once no request has arrived on any
  // connection for idleMs (the clients are done; a load balancer stopped routing here).
  let lastRequestAt = 0;
  let quietTimer: NodeJS.Timeout | undefined;
  function endIdleWhenQuiet() {
    const quietFor = Date.now() - lastRequestAt;
    if (quietFor >= idleMs) {
      for (const [socket, { requests }] of connections) if (requests === 0) socket.end();
    }
    if (connections.size > 0) quietTimer = setTimeout(endIdleWhenQuiet, Math.max(10, Math.min(idleMs, idleMs - quietFor)));
  }
  function onResponseClose(this: ServerResponse) {
    const connection = connections.get(this.req.socket);
    if (!connection) return;
    connection.requests--;
    if (connection.res === this) {
      connection.res = null;
      connection.reply = null;
    }
  }

  app.server.on("connection", (socket: Socket) => {
    connections.set(socket, { requests: 0, res: null, reply: null });
    socket.once("close", () => connections.delete(socket));
  });
  app.server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    lastRequestAt = Date.now();
    const connection = connections.get(req.socket);
    if (!connection) return;
    connection.requests++;
    connection.res = res;
    // "close" comes once per answer: a plain listener, no once() wrapper per request
    res.on("close", onResponseClose);
  });
  // fastify's handler of the server's "request" event runs before the listener above
  app.addHook("onRequest", (req, reply, done) => {
    const connection = connections.get(req.raw.socket);
    if (connection) connection.reply = reply;
    done();
  });
  app.addHook("onSend", (_req, reply, payload, done) => {
    if (closing) reply.header("connection", "close");
    done(null, payload);
  });
  // http.Server.close() calls this first (it would destroy idle connections at once): ended as above instead
  app.server.closeIdleConnections = () => {
    if (!quietTimer) endIdleWhenQuiet();
  };
  app.addHook("preClose", (done) => {
    draining = true;
    closing = true;
    done();
  });

  return {
    get draining() {
      return draining;
    },
    get closing() {
      return closing;
    },
    startDraining() {
      draining = true;
    },
    async acceptQueueDrained(until) {
      const address = app.server.address();
      return typeof address === "object" && address ? acceptQueueDrained(address.port, until) : true;
    },
    inFlight() {
      let n = 0;
      for (const connection of connections.values()) n += connection.requests;
      return n;
    },
    abort() {
      clearTimeout(quietTimer);
      let cut = 0;
      for (const [socket, { requests, res, reply }] of connections) {
        if (requests > 0 && res && !res.headersSent && reply?.raw === res) {
          cut++;
          // answered as every error is (the server's error handler): Request-Id, Cache-Control, the log line's outcome
          reply.header("connection", "close").send(new HttpProblem(503, "service_stopping", `the service stopped before this request finished; ${RETRY_WITH_KEY}`, null, 1));
        } else {
          if (requests > 0) cut++;
          socket.destroy();
        }
      }
      return cut;
    },
  };
}
