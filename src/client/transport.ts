// One HTTP call with the client's retry policy. A POST carries an Idempotency-Key generated once
// per call and sent again by each of its retries, so a retry never acts twice. Retried, with
// exponential backoff and jitter: no answer at all (connection refused or reset), 503 (the
// service is starting, stopping or lost its database; Retry-After is honoured) and
// 409 idempotency_key_in_use (the first try of this very call is still running).
import { ApiError, ConnectionError, type Problem } from "./errors.js";

export interface ClientOptions {
  /** e.g. http://localhost:8080 */
  baseUrl: string;
  /** The merchant account's API key (`npx cardflow accounts create`); not needed by the SDK calls. */
  apiKey?: string;
  /** Retries after the first try (default 3). */
  maxRetries?: number;
  /** First backoff delay; doubled on each retry, with jitter, at most 10 s (default 500 ms). */
  retryDelayMs?: number;
  /** The fetch to use (default globalThis.fetch). */
  fetch?: typeof fetch;
  /** Generates the Idempotency-Key of a POST call (default 128 random bits). */
  idempotencyKey?: () => string;
}

/** Per call: your own Idempotency-Key (e.g. your order id) and an AbortSignal. */
export interface CallOptions {
  idempotencyKey?: string;
  signal?: AbortSignal;
}

export interface Request {
  method: "GET" | "POST" | "DELETE";
  path: string;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  /** false: no API key (the client SDK calls authorise with the client secret). */
  auth?: boolean;
}

export type Send = <T>(request: Request, options?: CallOptions) => Promise<T>;
/** One GET whose answer is read as it comes (an event stream): no retries, a refusal is an ApiError. */
export type Open = (request: Request, options?: Pick<CallOptions, "signal">) => Promise<Response>;

const MAX_DELAY_MS = 10_000;

/** 128 random bits, hex: getRandomValues works in node and in any browser page (randomUUID needs https). */
export function randomKey(): string {
  return Array.from(globalThis.crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

function urlOf(baseUrl: string, { path, query = {} }: Request): string {
  // an id of "." or ".." (encodeURIComponent keeps dots) would be read as a step between folders,
  // and the request would reach another resource; no id the API gives is one
  const dots = path.split("/").find((segment) => segment === "." || segment === "..");
  if (dots !== undefined) throw new TypeError(`the id "${dots}" cannot be sent in a request's path (a URL reads it as a step between folders, naming another resource); nothing was sent`);
  // resolved as a relative path against the base's path as a folder, so a base under a prefix (a
  // gateway's /cardflow/) keeps it; the base's own query or fragment is not the API's
  const base = new URL(baseUrl);
  base.search = base.hash = "";
  if (!base.pathname.endsWith("/")) base.pathname += "/";
  const url = new URL(path.replace(/^\/+/, ""), base);
  for (const [name, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(name, String(value));
  return url.href;
}

async function problemOf(response: Response): Promise<Problem> {
  const text = await response.text();
  try {
    const body = JSON.parse(text) as Problem;
    if (typeof body?.code === "string") return body;
  } catch {
    // not JSON: a proxy's page, say
  }
  const requestId = Number(response.headers.get("request-id")) || 0;
  // a page (a proxy's, a load balancer's) is no message: its markup would be shown as one
  const page = /html/i.test(response.headers.get("content-type") ?? "") || text.trimStart().startsWith("<");
  const detail = page ? `${response.status} ${response.statusText}`.trim() + ": a page from something between the client and the API (a proxy?), not the API's answer" : text.slice(0, 200) || response.statusText;
  return { type: "about:blank", title: response.statusText, status: response.status, detail, code: `http_${response.status}`, param: null, request_id: requestId };
}

/**
 * A header value fetch cannot send (a character past U+00FF, a line break, NUL) fails before
 * anything is sent: said at once, naming the option, not retried and reported as an unanswered call
 * that may have been applied. Any other value goes to the API, which names what it refuses.
 */
function sendable(option: string, value: string): string {
  if (/[^\x00-\xff]|[\r\n\0]/.test(value)) throw new TypeError(`${option}: holds a character an HTTP header cannot carry (beyond U+00FF, a line break or NUL); nothing was sent`);
  return value;
}

/** Answers a retry may change: 503 (unavailable, stopping), 408 (the request did not arrive whole: it never ran), a key whose first try still runs. */
export const retryable = (error: ApiError) => error.status === 503 || error.status === 408 || (error.status === 409 && error.code === "idempotency_key_in_use");

export function createTransport({ baseUrl, apiKey, maxRetries = 3, retryDelayMs = 500, fetch: fetchFn = globalThis.fetch, idempotencyKey = randomKey }: ClientOptions): { send: Send; open: Open; backoff: (attempt: number) => number } {
  if (apiKey !== undefined) sendable("apiKey", apiKey);
  const backoff = (attempt: number, retryAfter = 0) => Math.max(retryAfter, Math.min(MAX_DELAY_MS, retryDelayMs * 2 ** attempt) * (0.5 + Math.random() / 2));
  const authorized = (request: Request, accept: string): Record<string, string> => ({ accept, ...(request.auth !== false && apiKey ? { authorization: `Bearer ${apiKey}` } : {}) });

  async function open(request: Request, { signal }: Pick<CallOptions, "signal"> = {}): Promise<Response> {
    const url = urlOf(baseUrl, request);
    let response: Response;
    try {
      response = await fetchFn(url, { method: request.method, headers: authorized(request, "text/event-stream"), ...(signal ? { signal } : {}) });
    } catch (cause) {
      if (signal?.aborted) throw signal.reason;
      throw new ConnectionError(`no answer from ${request.method} ${url}`, { cause, method: request.method });
    }
    if (!response.ok) throw new ApiError(await problemOf(response));
    return response;
  }

  async function send<T>(request: Request, { idempotencyKey: key, signal }: CallOptions = {}): Promise<T> {
    const headers = authorized(request, "application/json");
    if (request.method === "POST") {
      headers["content-type"] = "application/json";
      headers["idempotency-key"] = sendable("idempotencyKey", key ?? idempotencyKey()); // one key for every try of this call
    }
    const url = urlOf(baseUrl, request);
    const body = request.body === undefined ? undefined : JSON.stringify(request.body);
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      try {
        response = await fetchFn(url, { method: request.method, headers, body, ...(signal ? { signal } : {}) });
      } catch (cause) {
        if (signal?.aborted) throw signal.reason;
        if (attempt >= maxRetries) throw new ConnectionError(`no answer from ${request.method} ${url} after ${attempt + 1} tries`, { cause, method: request.method });
        await sleep(backoff(attempt, 0), signal);
        continue;
      }
      if (response.ok) return (await response.json()) as T;
      const error = new ApiError(await problemOf(response));
      if (!retryable(error) || attempt >= maxRetries) throw error;
      const retryAfter = Number(response.headers.get("retry-after")) * 1000 || 0;
      await sleep(backoff(attempt, Math.min(retryAfter, MAX_DELAY_MS)), signal);
    }
  }
  return { send, open, backoff };
}
