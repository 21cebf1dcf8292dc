// A careful client over plain fetch, recording every try: sent (invoke) and its outcome (complete).
// A write carries its Idempotency-Key on every try; on no answer (a timeout, a lost connection),
// a 503, a 5xx, or a 409 saying the first try is still running, it tries again with the same key
// (honouring Retry-After) until it gets an answer or its budget runs out.
import { createHash } from "node:crypto";
import type { Complete, Entry, Invoke, OpKind, RecordView } from "./history.js";
import type { Random } from "./random.js";
import { TRANSIENT } from "./checker/model.js";

export const CLIENT_TIMEOUT_MS = 5_000;
/** How long an operation keeps retrying (a crashed request's key is held for 180 s: not that long). */
export const RETRY_BUDGET_MS = 25_000;

export interface Request {
  op: number;
  worker: number;
  kind: OpKind;
  key: string | null;
  payment_id: string | null;
  method: "GET" | "POST";
  path: string;
  body?: unknown;
  /** Kept in the history, not sent (what a list must show). */
  note?: unknown;
}

export interface Transport {
  apiKey: string;
  now(): number;
  record(entry: Entry): void;
  /** A running server, chosen at random (waits while none runs). */
  server(rng: Random): Promise<{ index: number; url: string }>;
}

const viewOf = (b: Record<string, unknown>): RecordView | undefined => {
  if (typeof b.payment_id !== "string" || typeof b.status !== "string") return undefined;
  const fields = ["amount_authorized", "amount_capturable", "amount_captured", "amount_refunded", "payment_method_id", "request_id"] as const;
  return Object.fromEntries([["payment_id", b.payment_id], ["status", b.status], ...fields.filter((f) => f in b).map((f) => [f, b[f]])]) as RecordView;
};

/** What the checker keeps of an answer. */
function completion(req: Request, i: number, t: number, status: number, text: string, headers: Headers | null, error?: string): Complete {
  const base = { type: "complete", op: req.op, try: i, t, status } as const;
  if (status === 0) return { ...base, outcome: "unknown", ...(error ? { error } : {}) };
  let body: Record<string, unknown> = {};
  try {
    body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    /* not JSON: kept as its hash */
  }
  const request_id = Number(headers?.get("request-id")) || undefined;
  const common = { ...base, request_id, body_sha256: createHash("sha256").update(text).digest("hex") };
  if (status !== 200) {
    const code = typeof body.code === "string" ? body.code : undefined;
    const current_status = typeof body.current_status === "string" ? body.current_status : undefined;
    // a write answered 5xx may have committed before the store went away (503): its outcome is unknown
    const unknown = status >= 500 && (status !== 503 || req.key !== null);
    return { ...common, outcome: unknown ? "unknown" : "refused", code, current_status };
  }
  const replayed = headers?.get("idempotent-replayed") === "true";
  const data = Array.isArray(body.data) ? (body.data as Array<Record<string, unknown>>) : null;
  const answer: Partial<Complete> =
    req.kind === "list_payments" ? { records: (data ?? []).map(viewOf).filter((r): r is RecordView => r !== undefined), has_more: body.has_more === true }
    : req.kind === "list_cards" ? { ids: (data ?? []).map((c) => String(c.payment_method_id)) }
    : req.kind === "list_terminals" ? { ids: (data ?? []).map((c) => String(c.terminal_id)) }
    : req.kind === "save_card" ? { ids: [String(body.payment_method_id)] }
    : { record: viewOf(body) };
  return { ...common, outcome: "ok", replayed, ...answer };
}

async function sendOnce(t: Transport, rng: Random, req: Request, i: number, resend: boolean): Promise<{ complete: Complete; body: Record<string, unknown> | null; retryAfterMs: number }> {
  const { index, url } = await t.server(rng);
  const invoke: Invoke = { type: "invoke", op: req.op, try: i, t: t.now(), worker: req.worker, kind: req.kind, key: req.key, payment_id: req.payment_id, server: index, path: req.path, ...(req.body !== undefined || req.note !== undefined ? { body: req.note ?? req.body } : {}), ...(resend ? { resend } : {}) };
  t.record(invoke);
  const headers: Record<string, string> = { authorization: `Bearer ${t.apiKey}` };
  if (req.method === "POST") headers["content-type"] = "application/json";
  if (req.key) headers["idempotency-key"] = req.key;
  let complete: Complete;
  let body: Record<string, unknown> | null = null;
  let retryAfterMs = 0;
  try {
    const res = await fetch(url + req.path, { method: req.method, headers, body: req.method === "POST" ? JSON.stringify(req.body) : undefined, signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS) });
    const text = await res.text();
    complete = completion(req, i, t.now(), res.status, text, res.headers);
    if (res.status === 200) body = JSON.parse(text) as Record<string, unknown>;
    retryAfterMs = Math.min(2_000, Number(res.headers.get("retry-after") ?? 0) * 1_000);
  } catch (error) {
    complete = completion(req, i, t.now(), 0, "", null, String((error as Error).cause ?? error).slice(0, 200));
  }
  t.record(complete);
  return { complete, body, retryAfterMs };
}

/** Sends the request until it is answered (writes: retried with their key); then, sometimes, resends it as if the answer were lost. */
export async function perform(t: Transport, rng: Random, req: Request, { resendChance = 0.1 } = {}): Promise<{ complete: Complete; body: Record<string, unknown> | null }> {
  const started = t.now();
  for (let i = 0; ; i++) {
    const { complete, body, retryAfterMs } = await sendOnce(t, rng, req, i, false);
    // a server error is tried again a few times only (as SDKs do); no answer, or "try again", for the whole budget
    const serverError = complete.status >= 500 && complete.status !== 503;
    const again = req.key !== null && (complete.outcome === "unknown" || TRANSIENT.has(complete.code ?? "")) && !(serverError && i >= 2);
    if (again && t.now() - started < RETRY_BUDGET_MS) {
      await new Promise((r) => setTimeout(r, Math.max(retryAfterMs, rng.between(50, 100) * 2 ** Math.min(i, 4))));
      continue;
    }
    if (complete.outcome === "ok" && req.key !== null && rng.chance(resendChance)) await sendOnce(t, rng, req, i + 1, true);
    return { complete, body };
  }
}
