// Concurrent clients for the shutdown tests: each repeats a stored-card payment (create with an
// Idempotency-Key, authorize, capture) over keep-alive connections until the server refuses a
// connection (it has closed its listener) or the run is told to stop, and keeps what each request
// got: an answer (status, body, when) or the network error's code. A connection refused is an
// expected end; a reset, a socket closed without an answer or a timeout is a fault.
import { randomUUID } from "node:crypto";

export interface Outcome {
  kind: "create" | "authorize" | "capture";
  idempotencyKey: string | null;
  paymentId: string | null;
  status: number | null;
  body: any;
  /** The network error's code when there was no answer (ECONNREFUSED, ECONNRESET, UND_ERR_SOCKET...). */
  error: string | null;
  at: number;
}

/** Refused connections only: the listener is closed (or not open yet). */
export const REFUSED = "ECONNREFUSED";

function errorCode(error: unknown): string {
  let e = error as { code?: string; name?: string; cause?: unknown } | undefined;
  // fetch wraps the socket's error (TypeError: fetch failed, cause: SocketError / Error with code)
  for (let depth = 0; e && depth < 4; depth++) {
    if (e.code) return e.code;
    if (!e.cause) return e.name ?? String(e);
    e = e.cause as typeof e;
  }
  return String(error);
}

export function loadClients(base: string, key: string, account: string, clients: number) {
  const outcomes: Outcome[] = [];
  let stopped = false;
  const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };

  async function post(kind: Outcome["kind"], path: string, body: object, idempotencyKey: string | null, paymentId: string | null): Promise<Outcome> {
    let outcome: Outcome;
    try {
      const res = await fetch(base + path, {
        method: "POST",
        headers: idempotencyKey ? { ...headers, "idempotency-key": idempotencyKey } : headers,
        body: JSON.stringify({ external_account_id: account, ...body }),
        signal: AbortSignal.timeout(60_000),
      });
      const text = await res.text();
      const parsed = text ? JSON.parse(text) : null;
      outcome = { kind, idempotencyKey, paymentId: paymentId ?? parsed?.payment_id ?? null, status: res.status, body: parsed, error: null, at: Date.now() };
    } catch (error) {
      outcome = { kind, idempotencyKey, paymentId, status: null, body: null, error: errorCode(error), at: Date.now() };
    }
    outcomes.push(outcome);
    return outcome;
  }

  async function client(): Promise<void> {
    while (!stopped) {
      const key = randomUUID();
      const created = await post("create", "/v2/payment/intent", { amount: "10.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus_load" }, key, null);
      if (created.status !== 200) return;
      const paymentId = created.paymentId!;
      const authorized = await post("authorize", "/v2/payment/auth", { payment_id: paymentId }, null, paymentId);
      if (authorized.status !== 200) return;
      const captured = await post("capture", "/v2/payment/capture", { payment_id: paymentId, amount: "10.00" }, null, paymentId);
      if (captured.status !== 200) return;
    }
  }

  const running = Promise.all(Array.from({ length: clients }, client));
  return {
    outcomes,
    /** Resolves when every client ended (a refused connection, an error answer, or stop()). */
    done: running,
    stop() {
      stopped = true;
      return running;
    },
  };
}
