// One way to declare an endpoint: its input schema (the engine's zod schemas, so the library and
// the API validate alike), its answer schema (for OpenAPI and tests), who may call it, what it
// runs and how each version presents the answer. registerRoute() adds what every endpoint needs:
// validation, account scope, Idempotency-Key on POST, the command context.
import type { IncomingHttpHeaders } from "node:http";
import type { FastifyInstance, FastifySchema } from "fastify";
import type { z } from "zod";
import { sha256, type ApiKeyOwner } from "../api-keys.js";
import { CLIENT_SECRET_ACTOR, type CommandContext } from "../engine.js";
import { InvalidRequest } from "../errors.js";
import { parseInput, withoutNulls } from "../inputs.js";
import { CLIENT_SCOPE, fingerprintOf, type Idempotency } from "../idempotency.js";
import { EMPTY_BODY, HttpProblem } from "./problem.js";
import type { Version } from "./schemas.js";
import { answerSchema, serializerOf } from "./serializer.js";

/**
 * api_key: `Authorization: Bearer <key>`; client_secret: the intent's client secret in the body;
 * api_key_or_client_secret: either (spec §4.7's save card, "called from a client or a server").
 */
export type Auth = "api_key" | "client_secret" | "api_key_or_client_secret" | "none";

export interface RouteContext {
  version: Version;
  /** The merchant account of the API key; null on routes without one. */
  account: string | null;
  command: CommandContext;
  headers: IncomingHttpHeaders;
}

export interface RouteDef<S extends z.ZodType = z.ZodType, A = any> {
  method: "GET" | "POST" | "DELETE";
  /** Path after the version prefix when `versions` is given, else the whole path. */
  path: string;
  versions?: readonly Version[];
  summary: string;
  description?: string;
  /** Beyond the spec (documented as an extension in the OpenAPI document and README). */
  extension?: boolean;
  auth: Auth;
  /** The answer's media type when it is not JSON (the event stream's `text/event-stream`); `present` then gives a stream. */
  contentType?: string;
  /** The body of a POST; the query and path parameters of a GET or DELETE. */
  input: S;
  response: (version: Version) => z.ZodType;
  run(input: z.output<S>, ctx: RouteContext): Promise<A>;
  present(answer: A, version: Version): unknown;
  /**
   * false when the engine's appends do not carry this route's answer (the command is naturally
   * idempotent instead); default true: the Idempotency-Key record is stored with the events.
   */
  recordWithEvents?: boolean;
}

/** On every POST (an extension): see src/idempotency.ts. */
export const IDEMPOTENCY_HEADER = "idempotency-key";

export const defineRoute = <S extends z.ZodType, A>(def: RouteDef<S, A>): RouteDef<S, A> => def;

declare module "fastify" {
  interface FastifyRequest {
    owner: ApiKeyOwner | null;
  }
}

export function routeUrls(def: RouteDef): Array<{ version: Version; url: string }> {
  return def.versions ? def.versions.map((version) => ({ version, url: `/${version}${def.path}` })) : [{ version: "v2", url: def.path }];
}

export function registerRoute(app: FastifyInstance, def: RouteDef, idempotency: Idempotency): void {
  for (const { version, url } of routeUrls(def)) {
    const response = def.response(version);
    const serialized = answerSchema(response);
    // typed as any schema: a literal { 200 } would narrow reply.code() to 200 for the replayed answers
    const schema: FastifySchema | undefined = serialized && { response: { 200: serialized } };
    app.route({
      method: def.method,
      url,
      // the answer schema goes along for the tests, which check every live answer against it
      config: { auth: def.auth, answer: response },
      // 200 answers serialized from the answer schema (src/http/serializer.ts); errors are problem+json
      ...(serialized ? { schema, serializerCompiler: () => serializerOf(serialized) } : {}),
      async handler(req, reply) {
        try {
          const params = req.params as Record<string, string> | undefined;
          // a POST's fields are its JSON body and its path: one in the query string, or in the body
          // and the path both, would be silently ignored
          if (def.method === "POST") refuseMisplaced(req.query, req.body, params);
          else refuseAmbiguousQuery(req.url, req.query as Record<string, unknown>, params);
          // no body and no media type: said as an empty JSON body is (a POST with path parameters may have none)
          if (def.method === "POST" && req.body === undefined && !hasParams(params)) throw new InvalidRequest(EMPTY_BODY, null, "invalid_json");
          // a POST's path parameters (…/deliveries/{id}/retry) join its body
          // (a POST with path parameters and no body at all is its parameters alone: the fields it lacks are named)
          const raw = def.method !== "POST" ? { ...(req.query as object), ...params } : params && Object.keys(params).length && (req.body === undefined || (req.body && typeof req.body === "object")) ? { ...(req.body as object | undefined), ...params } : req.body;
          const input = parseInput(def.input, raw, def.method === "POST" ? "field" : "query parameter");
          const account = req.owner?.external_account_id ?? null;
          const claimed = (input as { external_account_id?: unknown }).external_account_id;
          if (account !== null && claimed !== undefined && claimed !== account) {
            throw new HttpProblem(403, "account_forbidden", "external_account_id: this API key belongs to another merchant account", "external_account_id");
          }
          const secret = (input as { client_secret?: unknown }).client_secret;
          if (def.auth === "api_key_or_client_secret" && account === null && secret === undefined) {
            throw new HttpProblem(401, "unauthorized", "send an API key (Authorization: Bearer <key>) or the payment's client_secret");
          }
          const command: CommandContext = { request_id: Number(req.id), actor: req.owner?.key_id ?? (secret === undefined ? def.auth : CLIENT_SECRET_ACTOR) };
          if (def.contentType) reply.type(def.contentType);
          const key = req.headers[IDEMPOTENCY_HEADER];
          // no closures on this path (reads): it runs on every status poll
          if (def.method !== "POST") return def.present(await def.run(input, { version, account, command, headers: req.headers }), version);
          // a command a payment's client secret authorised acted for the payment's account: the log line names it
          const run = async (cmd: CommandContext) => {
            const raw = await def.run(input, { version, account, command: cmd, headers: req.headers });
            if (account === null && secret !== undefined) req.clientAccount = accountOf(raw) ?? accountOf(input);
            return raw;
          };
          if (key === undefined) return (req.answer = def.present(await run(command), version));

          const present = (answer: unknown) => def.present(answer, version);
          // the body as it is read: an optional field sent as null is one not sent, for the key's request too
          const sent = withoutNulls(def.input, req.body);
          const scope = account ?? (secret === undefined ? "public" : `${CLIENT_SCOPE}${sha256(String(secret))}`);
          const answer = await idempotency.run(
            // the path's ids are part of the request (…/deliveries/{id}/retry): another delivery is another
            // request (fingerprinted by the pattern alone before: such records still replay for their 24 h)
            { scope, key: String(key), fingerprint: fingerprintOf(`${def.method} ${withParams(url, params)}`, sent), ...(hasParams(params) && { formerFingerprint: fingerprintOf(`${def.method} ${url}`, sent) }) },
            ({ idempotency_key, idempotency_since, idempotency: recordAnswer, answeredFromStore }) => run({ ...command, idempotency_key, idempotency_since, answeredFromStore, ...(def.recordWithEvents === false ? {} : { idempotency: recordAnswer }) }),
            present,
          );
          reply.header("idempotent-replayed", String(answer.replayed));
          if (answer.replayed) req.replayed = { answer: answer.body };
          req.answer = answer.body;
          return reply.code(answer.status).send(answer.body);
        } catch (error) {
          // answered already (a stop's deadline answered it 503 service_stopping): what the handler
          // met after that (the engine closing beneath a blocking auth) is no second answer
          if (reply.sent) return void req.log.debug({ err: error }, "request ended after its answer was sent");
          throw error;
        }
      },
    });
  }
}

/** The merchant account an answer or input names, if any. */
const accountOf = (value: unknown): string | null => {
  const account = (value as { external_account_id?: unknown } | null)?.external_account_id;
  return typeof account === "string" ? account : null;
};

const hasParams = (params: Record<string, string> | undefined): params is Record<string, string> => params !== undefined && Object.keys(params).length > 0;

/** The route's path with its parameters' values (the pattern itself when it has none, as fingerprints were before). */
const withParams = (url: string, params: Record<string, string> | undefined) => (params ? url.replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(params[name] ?? "")) : url);

/**
 * A GET's query parameter not validly percent-encoded (the parser would take `%FF` as the text
 * itself, where a path's is refused), given twice (which one would count?) or naming a path
 * parameter (the path's would win, the query's silently ignored): refused, naming it.
 */
function refuseAmbiguousQuery(url: string, query: Record<string, unknown>, params: Record<string, string> | undefined) {
  const at = url.indexOf("?");
  if (at >= 0 && !decodes(url.slice(at + 1))) {
    const raw = url.slice(at + 1).split("&").find((pair) => !decodes(pair))!.split("=")[0]!;
    const name = decodes(raw) ? decodeURIComponent(raw) : null;
    throw new InvalidRequest(`${name ?? "a parameter's name"}: not validly percent-encoded in the query string (UTF-8, each % followed by two hex digits)`, name, "invalid_url");
  }
  for (const name in query) {
    const value = query[name];
    if (Array.isArray(value)) throw new InvalidRequest(`${name}: given ${value.length} times in the query string; send it once`, name, "parameter_invalid");
    if (params && Object.hasOwn(params, name)) throw new InvalidRequest(`unknown query parameter: ${name} (given in the path)`, name, "unknown_parameter");
  }
}

function decodes(text: string): boolean {
  try {
    decodeURIComponent(text);
    return true;
  } catch {
    return false;
  }
}

function refuseMisplaced(query: unknown, body: unknown, params: Record<string, string> | undefined) {
  const queried = Object.keys((query ?? {}) as object);
  if (queried.length) throw new InvalidRequest(`unknown query parameter${queried.length > 1 ? "s" : ""}: ${queried.join(", ")} (a POST takes its fields in the JSON body)`, queried[0]!, "unknown_parameter");
  if (!params || !body || typeof body !== "object") return;
  const twice = Object.keys(params).filter((name) => Object.hasOwn(body, name));
  if (twice.length) throw new InvalidRequest(`unknown field${twice.length > 1 ? "s" : ""}: ${twice.join(", ")} (given in the path, not the body)`, twice[0]!, "unknown_parameter");
}
