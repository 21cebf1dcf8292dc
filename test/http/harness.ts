// End-to-end harness: the real server on a free port, over real HTTP (fetch), with a manual
// clock and sequential ids so every answer is exact.
import type { FastifyInstance } from "fastify";
import { pino } from "pino";
import { Writable } from "node:stream";
import type { z } from "zod";
import { expect } from "vitest";
import { createApiKeys } from "../../src/api-keys.js";
import { manualClock } from "../../src/clock.js";
import { createEngine } from "../../src/engine.js";
import { registerConsole } from "../../src/console/routes.js";
import { createServer, type ServerOptions } from "../../src/http/server.js";
import { ProblemOut } from "../../src/http/schemas.js";
import { answerSchema, preSerializedText } from "../../src/http/serializer.js";
import { sequentialIds } from "../../src/ids.js";
import { createSimulators } from "../../src/processors/simulator.js";
import { createMemoryStore } from "../../src/store/memory/index.js";
import type { ReadModelStore } from "../../src/store/port.js";

export interface Res {
  status: number;
  headers: Headers;
  body: any;
}

export interface StartOptions {
  /** Captures requested first and settled after captureSettleMs (default: at once). */
  captures?: "immediate" | "requested";
  captureSettleMs?: number;
  syncAuthTimeoutMs?: number;
  reconcileGraceMs?: number;
  idempotencyTtlMs?: number;
  bodyLimit?: number;
  /** Capture the pino log lines. */
  log?: string[];
  /** The engine's read models (default: in memory). */
  readModels?: ReadModelStore;
  /** Passed to createServer as they are. */
  server?: Pick<ServerOptions, "timeouts" | "authFailures" | "trustProxy" | "idempotencyMaxKeysPerAccount">;
}

export async function startApi(options: StartOptions = {}) {
  const clock = manualClock();
  const ids = sequentialIds();
  const store = createMemoryStore();
  const simulators = createSimulators({ clock, ids, captures: options.captures ?? "immediate", captureSettleMs: options.captureSettleMs ?? 1_000 });
  const engine = createEngine({ store, ...(options.readModels && { readModels: options.readModels }), clock, ids, processors: simulators, syncAuthTimeoutMs: options.syncAuthTimeoutMs ?? 120_000, ...(options.reconcileGraceMs !== undefined ? { reconcileGraceMs: options.reconcileGraceMs } : {}) });
  const apiKeys = createApiKeys(engine);
  const logger = options.log
    ? pino(
        { level: "info" },
        new Writable({
          write(chunk, _enc, done) {
            options.log!.push(String(chunk));
            done();
          },
        }),
      )
    : false;
  const app: FastifyInstance = createServer({
    engine,
    apiKeys,
    simulators,
    logger,
    ...(options.idempotencyTtlMs !== undefined ? { idempotencyTtlMs: options.idempotencyTtlMs } : {}),
    ...(options.bodyLimit !== undefined ? { bodyLimit: options.bodyLimit } : {}),
    // the web console on the same server, as npm start serves it
    extensions: [registerConsole],
    ...options.server,
  });
  const answerFaults = checkAnswers(app);
  await app.listen({ port: 0, host: "127.0.0.1" });
  const address = app.server.address();
  if (!address || typeof address === "string") throw new Error("no port");
  const base = `http://127.0.0.1:${address.port}`;

  async function request(method: string, path: string, { key, body, raw, headers = {}, signal }: { key?: string | null; body?: unknown; raw?: string | Uint8Array<ArrayBuffer>; headers?: Record<string, string>; signal?: AbortSignal } = {}): Promise<Res> {
    const h: Record<string, string> = { ...headers };
    if (key) h.authorization = `Bearer ${key}`;
    let payload: string | Uint8Array<ArrayBuffer> | undefined;
    if (raw !== undefined) payload = raw;
    else if (body !== undefined) payload = JSON.stringify(body);
    if (payload !== undefined && !Object.keys(h).some((k) => k.toLowerCase() === "content-type")) h["content-type"] = "application/json";
    const res = await fetch(base + path, { method, headers: h, ...(payload !== undefined ? { body: payload } : {}), ...(signal ? { signal } : {}) });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {}
    return { status: res.status, headers: res.headers, body: parsed };
  }

  /** A merchant account with its API key, and a client bound to both. */
  async function merchant(external_account_id: string, processor: "A" | "B" = "A", currency = "USD") {
    await engine.openAccount({ external_account_id, processor, currency });
    const { key } = await apiKeys.issue(external_account_id, "test");
    const client = {
      account: external_account_id,
      key,
      get: (path: string) => request("GET", path, { key }),
      post: (path: string, body: unknown, headers: Record<string, string> = {}) =>
        request("POST", path, { key, body: body && typeof body === "object" && !Array.isArray(body) ? { external_account_id, ...body } : body, headers }),
      /** Body sent exactly as given (no account added). */
      postRaw: (path: string, body: unknown, headers: Record<string, string> = {}) => request("POST", path, { key, body, headers }),
      async terminal(terminal_type: "A_async" | "A_sync" | "B_reader"): Promise<string> {
        const res = await client.post("/v2/hardware", { terminal_type });
        expect(res.status).toBe(200);
        return res.body.terminal_id;
      },
      read: (payment_id: string) => request("GET", `/v2/payment/intent/${payment_id}?external_account_id=${encodeURIComponent(external_account_id)}`, { key }),
    };
    return client;
  }

  return {
    app,
    base,
    engine,
    store,
    clock,
    simulators,
    request,
    merchant,
    /** Live 200 answers that broke their route's answer schema or JSON.stringify's bytes (close() throws on any). */
    answerFaults,
    async close() {
      await app.close();
      await engine.close();
      if (answerFaults.length) throw new Error(`answers that break their schema or JSON.stringify's bytes:\n${answerFaults.join("\n")}`);
    },
  };
}

export type Api = Awaited<ReturnType<typeof startApi>>;
export type Merchant = Awaited<ReturnType<Api["merchant"]>>;

/** Whether a route's answers are serialized from its answer schema, by schema. */
const compiled = new Map<z.ZodType, boolean>();

/**
 * Every 200 answer of every route, as the server sends it: it must match the route's answer
 * schema (outputs are validated here, in the tests, not on the request path), and the bytes on
 * the wire must be JSON.stringify's of the answer (the routes whose answers fastify serializes
 * from their schema: src/http/serializer.ts). Returns the faults found.
 */
function checkAnswers(app: FastifyInstance): string[] {
  const faults: string[] = [];
  const expected = new WeakMap<object, string>();
  app.addHook("preSerialization", (req, reply, payload, done) => {
    const schema = (req.routeOptions.config as { answer?: z.ZodType }).answer;
    if (reply.statusCode !== 200 || !schema) return done(null, payload);
    // an answer written out already (a list: src/http/serializer.ts preSerialized) is checked as the JSON it is
    const text = preSerializedText(payload);
    const answer: unknown = text === undefined ? payload : JSON.parse(text);
    const shape = schema.safeParse(answer);
    if (!shape.success) faults.push(`${req.method} ${req.routeOptions.url}: ${JSON.stringify(shape.error.issues)} in ${JSON.stringify(answer)}`);
    if (!compiled.has(schema)) compiled.set(schema, answerSchema(schema) !== undefined);
    if (compiled.get(schema)) expected.set(req, JSON.stringify(answer));
    else if (text !== undefined) faults.push(`${req.method} ${req.routeOptions.url}: a pre-serialized answer on a route whose answers are not serialized from their schema`);
    done(null, payload);
  });
  app.addHook("onSend", (req, _reply, payload, done) => {
    const bytes = expected.get(req);
    if (bytes !== undefined && payload !== bytes) faults.push(`${req.method} ${req.routeOptions.url}: sent ${String(payload)}, JSON.stringify gives ${bytes}`);
    done(null, payload);
  });
  return faults;
}

/** Checks an answer against a schema of the API, field by field (strict: no unknown fields). */
export function expectShape<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const result = schema.safeParse(body);
  if (!result.success) throw new Error(`answer does not match the schema: ${JSON.stringify(result.error.issues, null, 1)}\n${JSON.stringify(body, null, 1)}`);
  return result.data;
}

/** A problem+json answer with this status and code. */
export function expectProblem(res: Res, status: number, code: string, param?: string | null) {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  const problem = expectShape(ProblemOut, res.body);
  expect(problem.status).toBe(status);
  expect(problem.code).toBe(code);
  expect(problem.type).toBe(`urn:cardflow:problem:${code}`);
  expect(problem.request_id).toBe(Number(res.headers.get("request-id")));
  if (param !== undefined) expect(problem.param).toBe(param);
  return problem;
}
