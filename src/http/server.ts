// The HTTP API (fastify): the spec's /v1 and /v2 endpoints and the documented extensions, over
// the engine. Around every endpoint: API-key authentication (onRequest), problem+json errors,
// one request log line, metrics and a span per request (src/observability/http.ts), `Request-Id`
// on every answer, and the graceful close of ./drain.ts (`app.drain`).
import type { IncomingHttpHeaders } from "node:http";
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import type { Logger } from "pino";
import { createApiKeys, type ApiKeys } from "../api-keys.js";
import { createEngine, type Engine } from "../engine.js";
import { createIdempotency } from "../idempotency.js";
import { createSimulators, type Simulators } from "../processors/simulator.js";
import { fairTurns } from "./turns.js";
import { drainOnClose, type Drain } from "./drain.js";
import { readiness, type ReadinessOptions } from "./readiness.js";
import { observeHttp, observeParserRefusals } from "../observability/http.js";
import type { RequestNotes } from "../observability/instrument-engine.js";
import { instrumentIdempotency } from "../observability/instrument-ports.js";
import type { Metrics } from "../observability/metrics.js";
import { collectAllowedMethods } from "./method-not-allowed.js";
import { answerConnect, authFailureLimit, clientErrorHandler, continueOnlyToRead, dropRequestsOfAnsweredConnections, readEveryHeader, refusedHeaders, SECURITY_HEADERS, serverOptions, type AuthFailureLimit, type Timeouts } from "./hardening.js";
import { strictJsonBodies } from "./json-body.js";
import { openApiDocument } from "./openapi.js";
import { HttpProblem, problem, problemOf, PROBLEM_CONTENT_TYPE, withoutKey } from "./problem.js";
import { registerRoute, type Auth, type RouteDef } from "./route.js";
import { accountRoutes } from "./routes/account.js";
import { createWebhooks, type Webhooks } from "../webhooks/index.js";
import { apiKeyRoutes } from "./routes/api-keys.js";
import { clientSdkRoutes } from "./routes/client-sdk.js";
import { customerCardRoutes } from "./routes/customer-cards.js";
import { eventRoutes } from "./routes/events.js";
import { createEventStreams, eventStreamRoutes, type EventStreams } from "./routes/event-stream.js";
import { hardwareRoutes } from "./routes/hardware.js";
import { paymentHistoryRoutes } from "./routes/payment-history.js";
import { listCursors } from "../../projections/payment-list.js";
import { paymentRoutes } from "./routes/payments.js";
import { serviceRoutes } from "./routes/service.js";
import { simulatorRoutes } from "./routes/simulator.js";
import { webhookEndpointRoutes } from "./routes/webhook-endpoints.js";

export interface ServerOptions {
  engine: Engine;
  apiKeys?: ApiKeys;
  /** The simulators behind the engine: their test-helper endpoints are served when given. */
  simulators?: Simulators;
  /** The event feed and webhook endpoints (default: over the engine, secrets signed with a key of this process). */
  webhooks?: Webhooks;
  /** How long an Idempotency-Key answer is kept (default 24 h). */
  idempotencyTtlMs?: number;
  /** The most Idempotency-Key records one account may hold at once (then 429; default 1,000,000). */
  idempotencyMaxKeysPerAccount?: number;
  /** How long an Idempotency-Key claim of a request that never answered holds the key (default 180 s: longer than the 120 s blocking auth). */
  idempotencyLeaseMs?: number;
  /** Largest accepted request body in bytes (default 64 KiB). */
  bodyLimit?: number;
  /** pino logger; false for none. */
  logger?: Logger | false;
  /** How long a client may take to send a request (src/http/hardening.ts). */
  timeouts?: Timeouts;
  /** Failed API-key authentications allowed per client address before 429. */
  authFailures?: AuthFailureLimit;
  /** Behind a load balancer: which X-Forwarded-For hops give the client address (fastify trustProxy). Default false. */
  trustProxy?: boolean | string | string[];
  /** Prometheus metrics of the requests and Idempotency-Key answers (src/observability/metrics.ts). */
  metrics?: Metrics;
  /** Filled by the instrumented engine (instrumentEngine) with each request's command, for its log line. */
  notes?: RequestNotes;
  /** /readyz's bound on the read models' lag. */
  readiness?: ReadinessOptions;
  /** After close() begins, a connection idle this long is ended (default 1 s; ./drain.ts). */
  drainIdleMs?: number;
  /**
   * More to serve on this server, registered after the API: the composition adds the web console
   * (src/console/routes.ts) this way, so the API never imports the surfaces built on it.
   */
  extensions?: readonly ((app: FastifyInstance) => void)[];
}

declare module "fastify" {
  interface FastifyInstance {
    /** Graceful close: draining state, the signal long-lived answers end on (./drain.ts). */
    drain: Drain;
  }
}

const HOUR = 3_600_000;

function replyProblem(error: unknown, req: FastifyRequest, reply: FastifyReply) {
  const { problem: body, internal, retryAfterSeconds: retryAfter } = problemOf(error, Number(req.id), req.routeOptions.url?.startsWith("/v1/") ? "v1" : "v2");
  if (internal) req.log.error({ err: error }, "request failed");
  req.problemCode = body.code;
  // the limit is the server's setting: named, so a client knows what to send instead
  if (body.code === "body_too_large" && req.routeOptions.bodyLimit) body.detail = `${body.detail}: ${req.routeOptions.bodyLimit} bytes at most`;
  // a request without a key has none to retry with: sent again bare, it could act twice
  if (req.headers["idempotency-key"] === undefined) body.detail = withoutKey(body.detail);
  if (body.status === 401) reply.header("www-authenticate", 'Bearer realm="cardflow"');
  if (retryAfter !== undefined) reply.header("retry-after", String(retryAfter));
  // framework errors are answered before the onSend hook that sets these on other answers
  reply.header("request-id", req.id).headers(SECURITY_HEADERS);
  closeIfBodyUnread(req, reply);
  return reply.code(body.status).type(PROBLEM_CONTENT_TYPE).send(body);
}
/**
 * An answer given before the request's body arrived (a 401 in the onRequest hook, a malformed
 * URL) closes the connection: kept alive, Node would wait for the rest of the body, and a client
 * that never sends it would get a second answer for the same request (408).
 */
function closeIfBodyUnread(req: FastifyRequest, reply: FastifyReply) {
  if (!req.raw.complete) reply.header("connection", "close");
}
const BEARER = /^Bearer ([\x21-\x7e]{1,512})$/i;

/** The credential a request authenticates with: its route's, or, where it takes either, an API key when it sends an Authorization header. */
function credentialOf(req: FastifyRequest): "api_key" | "client_secret" | null {
  const { auth } = req.routeOptions.config as { auth?: Auth };
  if (auth === "api_key_or_client_secret") return req.headers.authorization === undefined ? "client_secret" : "api_key";
  return auth === "api_key" || auth === "client_secret" ? auth : null;
}
const presentedKey = (headers: IncomingHttpHeaders) => BEARER.exec(headers.authorization ?? "")?.[1];
/**
 * Why an Authorization header presents no API key, the fault named (its 401's detail); none of the
 * header is quoted. Node has trimmed the white space around its value.
 */
function notPresented(header: string | undefined): string {
  if (header === undefined) return "send an API key: Authorization: Bearer <key>";
  const [, scheme = "", space = "", key = ""] = /^(\S*)(\s*)([\s\S]*)$/.exec(header)!;
  if (scheme.toLowerCase() !== "bearer") return "Authorization: must be `Bearer <key>`: another scheme is not taken";
  if (key === "") return "Authorization: no API key after Bearer; send Authorization: Bearer <key>";
  if (space !== " ") return "Authorization: must be `Bearer <key>` with one space between Bearer and the key";
  if (key.length > 512) return `the API key is too long: ${key.length} characters, where a key has at most 512`;
  return "the API key has a character no API key has (white space, a control or non-ASCII character): send it as it was issued";
}

export function createServer(options: ServerOptions): FastifyInstance {
  const { engine, apiKeys = createApiKeys(engine), simulators, webhooks = createWebhooks({ engine }), idempotencyTtlMs, idempotencyLeaseMs, idempotencyMaxKeysPerAccount, bodyLimit = 64 * 1024, logger = false, timeouts, authFailures, trustProxy = false, extensions = [] } = options;
  const app = Fastify({
    ...(logger
      ? {
          loggerInstance: logger as FastifyBaseLogger,
          // fastify's request ids are strings; the log writes the integer the spec and README promise
          // (a child logger per request only when there is a log to write)
          childLoggerFactory: (parent: FastifyBaseLogger, bindings: Record<string, unknown>, opts: object) => parent.child({ ...bindings, request_id: Number(bindings.request_id) }, opts),
        }
      : { logger: false }),
    // one line per request, written by the onResponse hook below
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: "request_id" }),
    // spec §2.1: request_id is an integer, unique per API request; never taken from the client
    genReqId: () => String(engine.ids.requestId()),
    requestIdHeader: false,
    bodyLimit,
    onProtoPoisoning: "error",
    onConstructorPoisoning: "error",
    // requests on connections already accepted are served while the server closes (./drain.ts)
    return503OnClosing: false,
    // a path's id past the inputs' 255 characters is named by its route (400), not cut by the
    // router (its default 100 answered 414 to ids the API takes in a body); past this, 414
    routerOptions: { maxParamLength: 1024 },
    // errors found before routing (a malformed URL, an overlong path parameter)
    frameworkErrors: replyProblem,
    // and before fastify sees a request (headers too large, too slow): src/http/hardening.ts
    clientErrorHandler: clientErrorHandler(() => engine.ids.requestId(), observeParserRefusals({ metrics: options.metrics, logger })),
    ...serverOptions(timeouts),
    trustProxy,
  });
  // a header sent twice is refused however many others precede it (./hardening.ts)
  readEveryHeader(app);
  answerConnect(app);
  // first of the hooks: a request on a connection its parser's error answered never runs
  dropRequestsOfAnsweredConnections(app);
  app.removeContentTypeParser("text/plain");
  strictJsonBodies(app, bodyLimit);
  continueOnlyToRead(app, bodyLimit);
  const drain = drainOnClose(app, { idleMs: options.drainIdleMs });
  app.decorate("drain", drain);
  app.decorateRequest("owner", null);
  observeHttp(app, { metrics: options.metrics, log: Boolean(logger) && (logger as Logger).isLevelEnabled("info"), notes: options.notes ?? new Map() });
  const failedAuthentication = authFailureLimit(app, authFailures);
  // requests are let in by turns of the event loop, in arrival order, about 10 ms of their work a turn (./turns.ts)
  fairTurns(app);

  app.addHook("onRequest", async (req) => {
    // no Host, Authorization or Idempotency-Key twice, an Expect not met: refused before the key is read (./hardening.ts)
    const refused = refusedHeaders(req.raw);
    if (refused) throw refused;
    // a client secret is checked by its route, in the body (./route.ts)
    if (credentialOf(req) !== "api_key") return;
    const presented = presentedKey(req.headers);
    if (!presented) throw await failedAuthentication(req, new HttpProblem(401, "unauthorized", notPresented(req.headers.authorization)));
    const owner = await apiKeys.authenticate(presented);
    if (!owner) throw await failedAuthentication(req, new HttpProblem(401, "unauthorized", "the API key is not valid"));
    req.owner = owner;
  });

  // callback-style hooks (not async): no promise per request on the status read's hot path
  app.addHook("onSend", (req, reply, payload, done) => {
    reply.header("request-id", req.id).headers(SECURITY_HEADERS);
    closeIfBodyUnread(req, reply);
    done(null, payload);
  });

  // a client secret missing or wrong (its route's 401, or the engine's) counts like a wrong key;
  // a wrong key was counted when the onRequest hook refused it
  app.setErrorHandler(async (error, req, reply) => {
    // no route: a body it could not parse (empty, not JSON) is no reason to hide the 404 or 405
    // (a refusal of the request's headers, before any body, still is what it is)
    if (req.is404 && /^(FST_ERR_CTP_|CF_BODY_|invalid_json$)/.test((error as { code?: string }).code ?? "")) return unrouted(req, reply);
    const bySecret = credentialOf(req) === "client_secret" && (error as { status?: unknown }).status === 401;
    return replyProblem(bySecret ? await failedAuthentication(req, error) : error, req, reply);
  });

  const allowedMethods = collectAllowedMethods(app);
  app.setNotFoundHandler(unrouted);
  function unrouted(req: FastifyRequest, reply: FastifyReply) {
    const path = req.url.split("?")[0]!;
    const allow = allowedMethods(path);
    // CONNECT's target is a host and port (a tunnel through a proxy): no resource here takes any method
    if (allow.length || req.method === "CONNECT") {
      const detail = allow.length ? `${req.method} is not allowed on ${path}; use ${allow.join(" or ")}` : "CONNECT is not allowed: this server is an API, not a proxy";
      return reply.code(405).header("allow", allow.join(", ")).type(PROBLEM_CONTENT_TYPE).send(problem(405, "method_not_allowed", detail, null, Number(req.id)));
    }
    return reply.code(404).type(PROBLEM_CONTENT_TYPE).send(problem(404, "route_not_found", `no endpoint ${req.method} ${path}`, null, Number(req.id)));
  }

  // answers are kept sealed (secrets in them), under a key every process sharing the signing key derives alike
  const plainIdempotency = createIdempotency({ store: engine.store, clock: engine.clock, ttlMs: idempotencyTtlMs, leaseMs: idempotencyLeaseMs, maxKeysPerScope: idempotencyMaxKeysPerAccount, sealKey: webhooks.derivedKey("idempotency records") });
  const idempotency = options.metrics ? instrumentIdempotency(plainIdempotency, options.metrics) : plainIdempotency;
  const purge = setInterval(() => void idempotency.purge().catch((err) => app.log.warn({ err }, "idempotency purge failed")), HOUR);
  purge.unref();
  app.addHook("onClose", async () => clearInterval(purge));

  // server-sent event streams end with their final event when the server closes (after the grace: ./drain.ts)
  // a stream outlives its request's authentication: its key is asked again while it is open
  const streams = createEventStreams({
    keyStillValid: async (headers) => {
      const presented = presentedKey(headers);
      return presented !== undefined && (await apiKeys.authenticate(presented)) !== undefined;
    },
  });
  app.addHook("preClose", async () => streams.drain());
  app.addHook("onClose", async () => streams.stop());
  const ready = readiness(engine, drain, options.readiness);
  for (const route of apiRoutes(engine, simulators, webhooks, streams, ready, apiKeys)) registerRoute(app, route, idempotency);
  for (const extend of extensions) extend(app);
  return app;
}

/** Every endpoint, the OpenAPI document's included (it describes them all). */
export function apiRoutes(engine: Engine, simulators?: Simulators, webhooks: Webhooks = createWebhooks({ engine }), streams: EventStreams = createEventStreams(), ready = readiness(engine, undefined), apiKeys: ApiKeys = createApiKeys(engine)): RouteDef[] {
  let document: unknown;
  const routes: RouteDef[] = [
    ...paymentRoutes(engine),
    ...paymentHistoryRoutes(engine, listCursors(webhooks.derivedKey("payment list cursors"))),
    ...accountRoutes(engine, simulators !== undefined),
    ...hardwareRoutes(engine),
    ...customerCardRoutes(engine),
    ...eventRoutes(webhooks),
    ...eventStreamRoutes(webhooks, streams),
    ...webhookEndpointRoutes(webhooks),
    ...clientSdkRoutes(engine),
    ...apiKeyRoutes(apiKeys),
    ...(simulators ? simulatorRoutes(engine, simulators) : []),
  ];
  routes.push(...serviceRoutes(() => (document ??= openApiDocument(routes)), ready));
  return routes;
}

/** The OpenAPI document of the service as `npm start` runs it (simulator endpoints included). */
export function serviceOpenApi(): unknown {
  const engine = createEngine();
  return openApiDocument(apiRoutes(engine, createSimulators({ clock: engine.clock, ids: engine.ids })));
}
