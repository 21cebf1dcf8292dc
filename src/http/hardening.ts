// What the HTTP server does against slow, malformed or hostile clients, in one place:
// - timeouts: the headers and the whole request must arrive in bounded time (a client sending a
//   body one byte at a time is cut off); an idle keep-alive connection is closed. The time a
//   handler takes is not bounded by them: the blocking auth may answer after 120 s;
// - every answer carries Cache-Control: no-store and X-Content-Type-Options: nosniff;
// - errors Node's HTTP parser answers before fastify sees a request (431 headers too large, 414
//   a request line too long, 408 request timeout, 400 malformed) are problem+json too (logged and
//   counted by the server: no request line of theirs reaches the request log), and so is an
//   HTTP/1.1 request without Host (Node's own check answers a bare 400: left to refusedHeaders);
// - CONNECT (a proxy's tunnel) is answered as any request (405 problem+json), not closed unanswered;
// - an Expect other than 100-continue is refused (417 expectation_failed, problem+json: Node's own
//   answer is a bare 417);
// - Authorization, Idempotency-Key or Content-Type sent twice is refused (400 header_duplicated):
//   Node keeps the first Authorization and Content-Type and joins Idempotency-Keys, so a proxy
//   reading the other one would see another request; every header is read for it, however many;
// - repeated failed API-key authentication from one client address: 429 with Retry-After
//   (@fastify/rate-limit counts the failures, per process).
import rateLimit from "@fastify/rate-limit";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { ServerResponse, STATUS_CODES, type IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import { HttpProblem, problem, PROBLEM_CONTENT_TYPE } from "./problem.js";

export interface Timeouts {
  /** The request's headers must arrive within this (ms). Default 10 s. */
  headersMs?: number;
  /** The whole request (headers and body) must arrive within this (ms). Default 30 s. */
  requestMs?: number;
  /** An idle keep-alive connection is closed after this (ms). Default 72 s (above common load balancers' 60 s). */
  keepAliveMs?: number;
  /** How often Node checks the two first (ms). Default 1 s. */
  checkIntervalMs?: number;
}

export interface AuthFailureLimit {
  /** Failed authentications allowed per client address and window. Default 20. */
  max?: number;
  /** Default 60 s. */
  windowMs?: number;
}

export const SECURITY_HEADERS = { "cache-control": "no-store", "x-content-type-options": "nosniff" } as const;

/** Fastify options for the timeouts; Node's Host check is off (refusedHeaders answers it as problem+json). */
export function serverOptions({ headersMs = 10_000, requestMs = 30_000, keepAliveMs = 72_000, checkIntervalMs = 1_000 }: Timeouts = {}) {
  return {
    requestTimeout: requestMs,
    keepAliveTimeout: keepAliveMs,
    http: { headersTimeout: Math.min(headersMs, requestMs), connectionsCheckingInterval: checkIntervalMs, requireHostHeader: false },
  };
}

/**
 * Node drops a request's headers past a count (maxHeadersCount: 2,000 by its docs, about 1,000
 * as Node 20 runs it unset) unseen, so an Authorization or Idempotency-Key sent again after that
 * many fillers escaped refusedHeaders. 0: no count limit; the headers' size stays bounded
 * (maxHeaderSize: 431). A property of Node's server, not an option http.createServer reads (so
 * not one fastify's `http` options could pass).
 */
export function readEveryHeader(app: FastifyInstance): void {
  app.server.maxHeadersCount = 0;
}

/**
 * CONNECT: Node hands the connection over to the server's "connect" listeners (a tunnel) and,
 * without one, closes it without a word. Served as any request instead, its connection closed
 * after the answer (no route takes CONNECT: the not-found handler's 405). The connection is no
 * longer Node's: its errors are heard here (unheard, one would throw).
 */
export function answerConnect(app: FastifyInstance): void {
  app.server.on("connect", (req: IncomingMessage, socket: Socket) => {
    socket.on("error", () => socket.destroy());
    const res = new ServerResponse(req);
    res.shouldKeepAlive = false;
    res.assignSocket(socket);
    res.on("finish", () => {
      res.detachSocket(socket);
      socket.end();
    });
    app.server.emit("request", req, res);
  });
}

/** The headers a request may send once only. */
const ONCE = ["Authorization", "Idempotency-Key", "Content-Type"].map((name) => ({ name, lower: name.toLowerCase() }));

/** `name` is `lower` in any case (`lower`: letters and '-'), compared without allocating. */
function isHeader(name: string, lower: string): boolean {
  if (name.length !== lower.length) return false;
  for (let i = 0; i < lower.length; i++) if ((name.charCodeAt(i) | 0x20) !== lower.charCodeAt(i)) return false;
  return true;
}

/** Requests whose Expect Node found unmet (anything but 100-continue, in HTTP/1.1): continueOnlyToRead. */
const unmetExpectation = new WeakSet<IncomingMessage>();

/**
 * A request's headers refused before anything else (every request, the status read's hot path
 * too: one pass over rawHeaders, nothing allocated unless refused): an HTTP/1.1 request without
 * Host (as Node's own check, which answers a bare 400), a header of ONCE sent twice, an Expect
 * this server cannot meet.
 */
export function refusedHeaders(req: IncomingMessage): HttpProblem | undefined {
  if (req.headers.host === undefined && req.httpVersionMajor === 1 && req.httpVersionMinor === 1) {
    return new HttpProblem(400, "host_header_missing", "Host: an HTTP/1.1 request must send a Host header", "Host");
  }
  if (req.headers.expect !== undefined && unmetExpectation.has(req)) {
    return new HttpProblem(417, "expectation_failed", "Expect: only 100-continue is supported; send the request without Expect, or with Expect: 100-continue", "Expect");
  }
  const raw = req.rawHeaders;
  let seen = 0; // a bit per header of ONCE
  for (let i = 0; i < raw.length; i += 2) {
    for (let h = 0; h < ONCE.length; h++) {
      if (!isHeader(raw[i]!, ONCE[h]!.lower)) continue;
      if (seen & (1 << h)) return new HttpProblem(400, "header_duplicated", `${ONCE[h]!.name}: sent twice; send the header once`, ONCE[h]!.name);
      seen |= 1 << h;
    }
  }
  return undefined;
}

const CLIENT_ERRORS: Record<string, { status: number; code: string; detail: string }> = {
  HPE_HEADER_OVERFLOW: { status: 431, code: "headers_too_large", detail: "the request's headers are larger than this API accepts" },
  URI_TOO_LONG: { status: 414, code: "uri_too_long", detail: "the request's URL is longer than this API accepts" },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, code: "request_timeout", detail: "the request did not arrive in time" },
};

/**
 * A header overflow while the request line was still being read: the URL is what is too long.
 * The parser stops at the end of the part that overflowed (bytesParsed in the packet read last);
 * the line it is in is the request line if it starts with a method and a space (a header line
 * starts with its name and a colon). A line begun in an earlier packet is not known: 431.
 */
function requestLineOverflowed(error: Error & { rawPacket?: unknown; bytesParsed?: unknown }): boolean {
  const { rawPacket: packet, bytesParsed: end } = error;
  if (!Buffer.isBuffer(packet) || typeof end !== "number" || end <= 0) return false;
  const crlf = packet.lastIndexOf("\r\n", end - 1);
  const start = crlf < 0 ? 0 : crlf + 2;
  return /^[A-Z-]+ [^\s:]/.test(packet.toString("latin1", start, Math.min(start + 32, end)));
}

/**
 * Connections answered by clientErrorHandler. Their input is not read on: a request Node's parser
 * still finds there is not run (a process frozen past the headers' timeout, a VM paused, then
 * resumed: its timeout check answered 408 "did not arrive in time" while the request's bytes
 * waited unread, and the request then ran: a payment created behind a 408).
 */
const answered = new WeakSet<Socket>();

/** A request on a connection already answered (clientErrorHandler) is dropped unrun: the connection is closed. */
export function dropRequestsOfAnsweredConnections(app: FastifyInstance): void {
  app.addHook("onRequest", (req, reply, done) => {
    if (!answered.has(req.raw.socket)) return done();
    reply.hijack();
    req.raw.socket.destroy();
  });
}

/** What an answer of clientErrorHandler was: its status, its problem code, Node's error code, its request id. */
export interface ClientErrorAnswer {
  status: number;
  code: string;
  error: string | null;
  requestId: number;
}

/**
 * Answers errors of Node's HTTP parser as problem+json, with a request id of its own; `onAnswer`
 * is told of each (never of the request's bytes: the error carries them, `rawPacket`).
 */
export function clientErrorHandler(requestId: () => number, onAnswer: (answer: ClientErrorAnswer) => void = () => undefined) {
  return (error: Error & { code?: string }, socket: Socket) => {
    answered.add(socket);
    if (error.code === "ECONNRESET" || !socket.writable) {
      socket.destroy();
      return;
    }
    const { status, code, detail } = CLIENT_ERRORS[error.code === "HPE_HEADER_OVERFLOW" && requestLineOverflowed(error) ? "URI_TOO_LONG" : (error.code ?? "")] ?? { status: 400, code: "bad_request", detail: "the request is not valid HTTP" };
    const id = requestId();
    const body = JSON.stringify(problem(status, code, detail, null, id));
    const headers = {
      "content-type": PROBLEM_CONTENT_TYPE,
      "content-length": Buffer.byteLength(body),
      "request-id": id,
      ...SECURITY_HEADERS,
      connection: "close",
    };
    socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join("")}\r\n${body}`);
    onAnswer({ status, code, error: error.code ?? null, requestId: id });
  };
}

/**
 * Counts failed authentications (an API key or a client secret missing or wrong) per client
 * address; after `max` in a window, the failure is answered 429 (Retry-After: until the window
 * ends) instead of 401. A valid key or secret is never refused.
 */
export function authFailureLimit(app: FastifyInstance, { max = 20, windowMs = 60_000 }: AuthFailureLimit = {}) {
  let count: ReturnType<FastifyInstance["createRateLimit"]> | undefined;
  void app.register(rateLimit, { global: false }).after(() => {
    count = app.createRateLimit({ max, timeWindow: windowMs });
  });
  return async <E>(req: FastifyRequest, unauthorized: E): Promise<E | HttpProblem> => {
    const limit = await count!(req);
    if (limit.isAllowed || !limit.isExceeded) return unauthorized;
    const detail = "too many requests with a missing or invalid API key or client secret from this client; retry later";
    return new HttpProblem(429, "too_many_failed_authentications", detail, null, Math.max(1, limit.ttlInSeconds));
  };
}

/**
 * Expect: 100-continue (a client waiting for word before it sends its body): Node answers 100 at
 * once, to a request about to be refused too (no key, a Content-Length past the limit), and the
 * body was sent for nothing. 100 goes out only for a request whose body will be read: once its
 * headers passed the checks and authentication (the preParsing hook), and its Content-Length, if
 * given, is within the limit; else the refusal is the answer (RFC 9110 §10.1.1).
 * Any other Expect: Node answers a bare 417 unless told; the request goes to fastify instead, to be
 * refused as problem+json (refusedHeaders).
 */
export function continueOnlyToRead(app: FastifyInstance, bodyLimit: number): void {
  app.server.on("checkContinue", (req, res) => app.server.emit("request", req, res));
  app.server.on("checkExpectation", (req, res) => {
    unmetExpectation.add(req);
    app.server.emit("request", req, res);
  });
  app.addHook("preParsing", (req, reply, payload, done) => {
    const declared = Number(req.headers["content-length"]);
    if (/100-continue/i.test(req.headers.expect ?? "") && !(declared > (req.routeOptions.bodyLimit ?? bodyLimit))) reply.raw.writeContinue();
    done(null, payload);
  });
}
