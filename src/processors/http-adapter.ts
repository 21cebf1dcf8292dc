// An example processor adapter: the ProcessorPort over a processor's JSON HTTP API, through the
// guarded outbound client. A real processor's API differs; the shape of an adapter does not: one
// call per port method, the attempt id sent as the processor's Idempotency-Key, every answer
// validated before it becomes an event (an answer that is not a well-formed outcome is an unknown
// outcome, never an approval), a refusal (4xx) told apart from no answer (5xx, timeout), and late
// outcomes reported through connect(report).
//
// The processor API it speaks (POST unless said; Authorization: Bearer <apiKey>):
//   /v1/charge {key, payment}                   → outcome      (stored card; A: async/sync terminals use /v1/terminal/*)
//   /v1/terminal/start {key, payment, terminal} → {}           (409 {error:{code:"terminal_busy"}} when collecting)
//   /v1/terminal/cancel {payment, terminal_id}  → {}
//   /v1/cards/read {payment, card_number}       → card         (B: the card the client SDK read)
//   /v1/authorize {key, payment}                → outcome      (B: the collected card)
//   /v1/capture {key, payment, amount}          → {kind: "captured" | "capture_requested"}
//   /v1/void {key, payment}                     → {}
//   /v1/refund {key, payment, amount}           → {refund_id}
//   /v1/cards/save {key, payment, external_customer_id} → {payment_method_id}
//   /v1/cards/retrieve {external_account_id, payment_method_id} → card (404: unknown)
//   GET /v1/calls/{key}                         → the recorded outcome of that call (404: never received)
//   GET /v1/events[?after=<cursor>]             → {events: [{payment_id, event}], next} (no after: none, next = now)
// outcome: {kind: "authorized" | "captured" | "capture_requested", authorization} or
//          {kind: "failed", last_error, last_error_code}. A 4xx answer {error: {code, message}}
//          means the processor did nothing (ProcessorRefused; Conflict for terminal_busy).
import { z } from "zod";
import { Card } from "../../machines/events.js";
import type { Clock } from "../clock.js";
import { Conflict, ProcessorRefused } from "../errors.js";
import { OutboundRefused, type Outbound } from "../outbound/client.js";
import type { AdapterState } from "./adapters.js";
import { answerSchemas, whatWasWrong } from "./answers.js";
import type { PaymentView, ProcessorPort, ProcessorReport, RecordedOutcome } from "./port.js";

export interface HttpProcessorOptions {
  outbound: Outbound;
  /** The processor API's base URL (https outside the sandbox). */
  baseUrl: string;
  apiKey: string;
  /** The processor must answer within this (ms); keep it below RECONCILE_GRACE_MS. Default 20 s. */
  timeoutMs?: number;
  /** How often late outcomes are asked for (ms); 0: never. Default 1 s. */
  pollMs?: number;
  clock: Clock;
  /**
   * Told when polls start failing (once: the next polls try again, unsaid until one succeeds, then
   * onRecovered), and of each report cardflow refuses for good.
   */
  onError?: (error: unknown) => void;
  onRecovered?: () => void;
  /**
   * Where the poll's cursor is kept (AdapterState: the service's read-model store), so a start
   * reads on from where the last process left off. Absent: each start polls from its own "now".
   */
  state?: AdapterState;
  /** The adapter's name in `state` ("A", "B"): two adapters of one processor URL keep their cursors apart. */
  name?: string;
}

const { Outcome, CaptureOutcome, Refund, SavedCard, Recorded, Event } = answerSchemas(true);
const Events = z.strictObject({ events: z.array(z.strictObject({ payment_id: z.string(), event: Event })), next: z.string() });
const Refusal = z.object({ error: z.object({ code: z.string(), message: z.string() }) });
const Empty = z.object({});

/** What the processor is told of a payment (never the client secret or cardflow's internals). */
function paymentOf(payment: PaymentView) {
  const { payment_id, external_account_id, amount, currency, capture_method, payment_method_types, payment_method_id, external_customer_id } = payment.intent;
  return { payment_id, external_account_id, amount, currency, capture_method, payment_method_types, payment_method_id, external_customer_id, card: payment.card };
}

export function createHttpProcessor(options: HttpProcessorOptions): ProcessorPort & { connect(report: ProcessorReport): void; close(): void } {
  const { outbound, apiKey, timeoutMs = 20_000, pollMs = 1_000, clock, onError = () => undefined, onRecovered = () => undefined } = options;
  const base = options.baseUrl.replace(/\/+$/, "");

  /** One call; the answer validated by `schema`. A 4xx is the processor's refusal; anything else unexpected throws (outcome unknown). */
  async function call<T>(method: "GET" | "POST", path: string, body: unknown, schema: z.ZodType<T>, key?: string, notFound?: () => T): Promise<T> {
    const headers: Record<string, string> = { authorization: `Bearer ${apiKey}`, accept: "application/json", ...(key ? { "idempotency-key": key } : {}) };
    if (body !== undefined) headers["content-type"] = "application/json";
    let answer;
    try {
      answer = await outbound.request(`${base}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }), timeoutMs });
    } catch (error) {
      // refused by the outbound policy: nothing was sent, so the processor did nothing
      if (error instanceof OutboundRefused) throw new ProcessorRefused(`processor unreachable by policy: ${error.message}`, "processor_not_allowed");
      throw error;
    }
    if (answer.status === 404 && notFound) return notFound();
    const json = (() => {
      try {
        return JSON.parse(answer.body) as unknown;
      } catch {
        return undefined;
      }
    })();
    if (answer.status >= 400 && answer.status < 500) {
      const refusal = Refusal.safeParse(json);
      const { code, message } = refusal.success ? refusal.data.error : { code: `http_${answer.status}`, message: `the processor answered ${answer.status}` };
      if (code === "terminal_busy") throw new Conflict(message, code, "terminal_id");
      throw new ProcessorRefused(message, code);
    }
    if (answer.status !== 200) throw new Error(`processor ${method} ${path}: HTTP ${answer.status} (outcome unknown)`);
    const parsed = schema.safeParse(json);
    if (!parsed.success) throw new Error(`processor ${method} ${path}: unexpected answer (outcome unknown): ${whatWasWrong(parsed.error)}`);
    return parsed.data;
  }

  let stopPolling: (() => void) | undefined;
  async function poll(report: ProcessorReport, after: string | null): Promise<string | null> {
    const page = await call("GET", `/v1/events${after === null ? "" : `?after=${encodeURIComponent(after)}`}`, undefined, Events);
    for (const { payment_id, event } of page.events) {
      await report(payment_id, event).catch((error: unknown) => {
        const status = (error as { status?: number }).status;
        // an outcome already recorded (by another process polling too, or the reconciler): nothing to do
        if (status === 409) return;
        // refused for good (a payment cardflow does not have): told, and passed, so the reports after it are not held
        if (status !== undefined && status >= 400 && status < 500) return onError(new Error(`processor report for payment ${payment_id} refused: ${error instanceof Error ? error.message : String(error)}`, { cause: error }));
        // the store did not answer: the page is read again on the next poll
        throw error;
      });
    }
    return page.next;
  }

  return {
    chargeStoredCard: ({ payment, key }) => call("POST", "/v1/charge", { key, payment: paymentOf(payment) }, Outcome, key),
    startTerminalAuthorization: async ({ payment, terminal, key }) => void (await call("POST", "/v1/terminal/start", { key, payment: paymentOf(payment), terminal }, Empty, key)),
    cancelTerminalAuthorization: async ({ payment, terminal_id }) => void (await call("POST", "/v1/terminal/cancel", { payment: paymentOf(payment), terminal_id }, Empty)),
    readCardFromClient: ({ payment, card_number }) => call("POST", "/v1/cards/read", { payment: paymentOf(payment), card_number }, Card),
    authorizeCollectedCard: ({ payment, key }) => call("POST", "/v1/authorize", { key, payment: paymentOf(payment) }, Outcome, key),
    capture: ({ payment, amount, key }) => call("POST", "/v1/capture", { key, payment: paymentOf(payment), amount }, CaptureOutcome, key),
    void: async ({ payment, key }) => void (await call("POST", "/v1/void", { key, payment: paymentOf(payment) }, Empty, key)),
    refund: ({ payment, amount, key }) => call("POST", "/v1/refund", { key, payment: paymentOf(payment), amount }, Refund, key),
    saveCard: ({ payment, external_customer_id, key }) =>
      call("POST", "/v1/cards/save", { key, payment: paymentOf(payment), external_customer_id }, SavedCard, key),
    lookup: (key) => call<RecordedOutcome | "never_received">("GET", `/v1/calls/${encodeURIComponent(key)}`, undefined, Recorded, undefined, () => "never_received"),
    retrieveStoredCard: (req) => call<Card | undefined>("POST", "/v1/cards/retrieve", req, Card, undefined, () => undefined),

    /**
     * Asks the processor for late outcomes every pollMs: from the cursor kept in `state` (what was
     * reported while no process polled, a capture settled meanwhile, is read then), else from now on.
     */
    connect(report) {
      stopPolling?.();
      if (pollMs <= 0) return;
      const { state } = options;
      const kept = `http-adapter ${options.name ?? ""} ${base} events cursor`;
      let cursor: string | null = null;
      let stopped = false;
      let cancel = () => undefined as void;
      // a processor that does not answer fails every poll: said once, and once it answers again
      let failing = false;
      /** The cursor last written to `state` (a failed write is tried again after the next poll). */
      let written: string | null = null;
      const polled = (c: string | null) => {
        if (state && c !== null && c !== written) void state.set(kept, c).then(() => void (written = c), () => undefined);
        cursor = c;
        if (failing) onRecovered();
        failing = false;
        next();
      };
      const failed = (error: unknown) => {
        // its message says the cause once (a cause chained to it would be said again by the log's serializer)
        if (!failing) onError(new Error(`late outcomes not read (asked again every ${pollMs} ms): ${error instanceof Error ? error.message : String(error)}`));
        failing = true;
        next();
      };
      // from the cursor kept (read again until it is read: a poll from "now" would pass what it
      // holds); with none, the first poll only learns where "now" is
      let started = false;
      const start = async () => {
        cursor = written = state ? await state.get(kept) : null;
        started = true;
      };
      const pollOnce = () => void (started ? poll(report, cursor) : start().then(() => poll(report, cursor))).then(polled, failed);
      const next = () => {
        if (stopped) return;
        cancel = clock.setTimer(pollMs, pollOnce);
      };
      pollOnce();
      stopPolling = () => ((stopped = true), cancel());
    },
    close: () => stopPolling?.(),
  };
}
