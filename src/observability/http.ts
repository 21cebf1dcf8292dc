// What the HTTP server records of each request, in fastify hooks (callback style: no promise per
// request on the status read's hot path):
// - metrics: requests by route template, method and status, latency by route and method, 429s;
// - a server span per request (W3C traceparent honoured when an SDK is registered), active while
//   the handler runs so the command and what it calls are traced under it;
// - the request log line: request id, account, key id, method, route, status, payment id,
//   command, outcome, latency; never bodies, headers, keys, secrets or card data;
// - a request Node's HTTP parser refused (no request reaches fastify): a warning and a count.
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Span } from "@opentelemetry/api";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Logger } from "pino";
import { paymentIdOf as answeredPaymentId, type RequestNote, type RequestNotes } from "./instrument-engine.js";
import type { Metrics } from "./metrics.js";
import { ATTR, tracer } from "./tracing.js";
import { withoutSecrets } from "./redact.js";

declare module "fastify" {
  interface FastifyRequest {
    /** The request's server span, while an SDK records it. */
    span: Span | null;
    /** The problem code of an error answer (the log line's outcome when no command ran). */
    problemCode: string | null;
    /** The account a command authorised by a payment's client secret acted for (no API key names one). */
    clientAccount: string | null;
    /** A kept answer sent again for its Idempotency-Key (no command ran). */
    replayed: { answer: unknown } | null;
    /** A POST's answer (the payment a simulator's route answers names none in its request). */
    answer: unknown;
    /** Its handler is done (its answer on its way); its client went before it was; it was counted and logged. */
    handled: boolean;
    /** Its answer is a stream (server-sent events): it ends when its client closes it. */
    streamed: boolean;
    clientGone: boolean;
    ended: boolean;
  }
}

const SERVER_SPAN = { kind: SpanKind.SERVER };

type Children = { requests: Map<number, { inc(): void }>; duration: { observe(v: number): void } };

export interface ObserveOptions {
  metrics?: Metrics;
  /** Write the request log line (fastify's logger). */
  log: boolean;
  notes: RequestNotes;
}

export function observeHttp(app: FastifyInstance, { metrics, log, notes }: ObserveOptions): void {
  app.decorateRequest("span", null);
  app.decorateRequest("problemCode", null);
  app.decorateRequest("replayed", null);
  app.decorateRequest("clientAccount", null);
  app.decorateRequest("answer", null);
  app.decorateRequest("handled", false);
  app.decorateRequest("streamed", false);
  app.decorateRequest("clientGone", false);
  app.decorateRequest("ended", false);

  // metric children per route and method, then status: created once, never a label hash per request
  const children = new Map<string, Map<string, Children>>();
  function childrenOf(route: string, method: string): Children {
    let byMethod = children.get(route);
    if (!byMethod) children.set(route, (byMethod = new Map()));
    let c = byMethod.get(method);
    if (!c) byMethod.set(method, (c = { requests: new Map(), duration: metrics!.httpDuration.labels(route, method) }));
    return c;
  }
  const rateLimited = new Map<string, { inc(): void }>();

  app.addHook("onRequest", (req, reply, done) => {
    // a connection closed before the answer was written: fastify runs no onResponse then (nor at
    // the end of a stream its client closes, whose status went out when it began: that one is logged)
    reply.raw.once("close", () => {
      if (req.ended) return;
      if (req.handled) ended(req, reply, req.streamed ? reply.statusCode : CLIENT_CLOSED_REQUEST);
      else req.clientGone = true; // counted and logged once its handler is done (onSend)
    });
    // named once it is known to record: without an SDK a request allocates no name
    const span = tracer.startSpan("HTTP", SERVER_SPAN, propagation.extract(ROOT_CONTEXT, req.headers));
    const recording = span.isRecording();
    // the command's note: for the log line, and the span's payment id
    if (log || recording) notes.set(Number(req.id), null);
    if (!recording) return done();
    const route = req.routeOptions.url ?? "unmatched";
    span.updateName(`${req.method} ${route}`);
    span.setAttributes({ "http.request.method": req.method, "http.route": route, [ATTR.requestId]: Number(req.id) });
    req.span = span;
    done();
  });

  // the handler runs inside the request's span (after body parsing, whose events run outside it)
  app.addHook("preHandler", (req, _reply, done) => {
    if (req.span) context.with(trace.setSpan(context.active(), req.span), done);
    else done();
  });

  app.addHook("onResponse", (req, reply, done) => {
    ended(req, reply, reply.statusCode);
    done();
  });

  // a client gone before its answer (a blocking auth it stopped waiting for): fastify runs no
  // onResponse, so the request is counted and logged as 499 once its handler is done, here or
  // when its connection closes (whichever comes last)
  app.addHook("onSend", (req, reply, payload, done) => {
    req.handled = true;
    req.streamed = typeof (payload as { pipe?: unknown } | null)?.pipe === "function";
    if (reply.raw.destroyed || req.clientGone) ended(req, reply, CLIENT_CLOSED_REQUEST);
    done(null, payload);
  });

  function ended(req: FastifyRequest, reply: FastifyReply, status: number) {
    if (req.ended) return;
    req.ended = true;
    const route = req.routeOptions.url ?? "unmatched";
    if (metrics) {
      const c = childrenOf(route, req.method);
      let counter = c.requests.get(status);
      if (!counter) c.requests.set(status, (counter = metrics.httpRequests.labels(route, req.method, String(status))));
      counter.inc();
      c.duration.observe(reply.elapsedTime / 1000);
      if (status === 429) {
        let refused = rateLimited.get(route);
        if (!refused) rateLimited.set(route, (refused = metrics.rateLimited.labels(route)));
        refused.inc();
      }
    }
    const id = Number(req.id);
    const note = log || req.span ? notes.get(id) : null;
    if (log || req.span) notes.delete(id);
    if (req.span) {
      req.span.setAttribute("http.response.status_code", status);
      const paymentId = paymentIdOf(req, note);
      if (paymentId) req.span.setAttribute(ATTR.paymentId, paymentId);
      if (status >= 500) req.span.setStatus({ code: SpanStatusCode.ERROR });
      req.span.end();
    }
    if (log) writeLogLine(req, reply, status, note);
  }
}

/**
 * What a request Node's HTTP parser answered leaves (src/http/hardening.ts clientErrorHandler):
 * a warning with its request id, status and codes, and a count by status; none of its bytes.
 */
export function observeParserRefusals({ metrics, logger }: { metrics?: Metrics; logger: Logger | false }) {
  return ({ status, code, error, requestId }: { status: number; code: string; error: string | null; requestId: number }) => {
    metrics?.httpClientErrors.labels(String(status)).inc();
    if (logger) logger.warn({ request_id: requestId, status, code, error }, "request refused by the HTTP parser");
  };
}

/** The status logged and counted for a request whose client hung up before its answer (nginx's). */
export const CLIENT_CLOSED_REQUEST = 499;

/** The payment a request is about: its command's, else the kept answer's it replayed, else the path's or the body's payment_id, else its answer's. */
function paymentIdOf(req: FastifyRequest, note: RequestNote | null | undefined): string | null {
  if (note?.payment_id) return note.payment_id; // the command's, written without card numbers already (./instrument-engine.ts)
  const answered = req.replayed && answeredPaymentId(req.replayed.answer); // the payment the kept answer names
  if (answered) return answered;
  const params = req.params as { payment_id?: unknown } | undefined;
  const body = req.body as { payment_id?: unknown } | undefined;
  const given = typeof params?.payment_id === "string" ? params.payment_id : typeof body?.payment_id === "string" ? body.payment_id : null;
  return given === null ? answeredPaymentId(req.answer) : withoutSecrets(given);
}

function writeLogLine(req: FastifyRequest, reply: FastifyReply, status: number, note: RequestNote | null | undefined) {
  const paymentId = paymentIdOf(req, note);
  req.log.info(
    {
      account: req.owner?.external_account_id ?? req.clientAccount ?? null,
      key_id: req.owner?.key_id ?? null,
      method: req.method,
      route: req.routeOptions.url ?? "unmatched", // as the metrics label it
      status,
      payment_id: paymentId,
      command: note?.command ?? null,
      // a kept answer sent again: no command ran
      outcome: note?.outcome ?? req.problemCode ?? (req.replayed ? "replayed" : status < 400 ? "ok" : null),
      latency_ms: Math.round(reply.elapsedTime * 10) / 10,
    },
    "request",
  );
}
