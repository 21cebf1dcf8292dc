// Hand-written histories for the checker's tests: a few lines per operation and per event, so a
// test reads as what the clients saw and what the store holds.
import type { LedgerEntry } from "../../scripts/chaos/checker/index.js";
import type { Complete, Entry, FaultKind, OpKind, RecordView } from "../../scripts/chaos/history.js";
import type { RecordedEvent } from "../../src/store/port.js";

export const CARD = { type: "card_not_present", brand: "visa", last_4: "4242", exp_month: "12", exp_year: 2030, cardholder_name: null, funding: "credit" } as const;
export const authorization = (amount: string) => ({ amount_authorized: amount, tip_amount: "0.00", donation_amount: "0.00", authorization_code: "ABC123", card: CARD, avs_response_code: null, avs_response_message: null });

export function intent(payment_id: string, amount = "20.00", capture_method: "manual" | "automatic" = "manual") {
  return {
    payment_id, external_account_id: "acct", amount, currency: "USD", payment_method_types: "card", capture_method, processor: "B",
    external_transaction_id: null, external_customer_id: "cus_1", payment_method_id: "pm_card_visa", stored_card: CARD,
    allow_saving_card: false, client_secret: null, date_created: "2025-01-01T00:00:00.000Z",
  };
}

export interface TrySpec {
  at: [number, number];
  outcome?: Complete["outcome"];
  status?: number;
  code?: string;
  record?: RecordView;
  records?: RecordView[];
  has_more?: boolean;
  ids?: string[];
  request_id?: number;
  replayed?: boolean;
  body_sha256?: string;
  current_status?: string;
  resend?: boolean;
}

/** The wall clock at the run's time 0 (the history's clock entry): events are stamped from it. */
const WALL = Date.parse("2025-01-01T00:00:00.000Z");

export function scenario() {
  const history: Entry[] = [{ type: "clock", t: 0, wall: WALL }];
  let stamp = WALL;
  const events: RecordedEvent[] = [];
  const ledger: Array<[string, LedgerEntry]> = [];
  let ops = 0;
  const revisions = new Map<string, number>();
  return {
    history,
    events,
    ledger,
    /** Later events are stamped at this time of the run (ms; default 0). */
    at(ms: number) {
      stamp = WALL + ms;
      return this;
    },
    /** An event on a payment's stream, caused by `key` (null: the system) in request `request_id`. */
    event(payment_id: string, type: string, data: object, key: string | null, request_id = 1, actor = key === null ? "reconciler" : "key_1") {
      const stream = `payment-${payment_id}`;
      const revision = (revisions.get(stream) ?? -1) + 1;
      revisions.set(stream, revision);
      events.push({ id: `e${events.length}`, type, version: 1, data, metadata: { timestamp: new Date(stamp).toISOString(), request_id, idempotency_key: key, actor }, stream, revision, position: events.length + 1 });
      return this;
    },
    /** An operation and its tries (each sent at at[0], answered at at[1]). */
    op(kind: OpKind, key: string | null, payment_id: string | null, tries: TrySpec[], extra: { body?: unknown; path?: string } = {}) {
      const op = ++ops;
      tries.forEach((t, i) => {
        history.push({ type: "invoke", op, try: i, t: t.at[0], worker: 0, kind, key, payment_id, server: 0, path: extra.path ?? `/${kind}`, body: extra.body, ...(t.resend ? { resend: true } : {}) });
        const outcome = t.outcome ?? (t.status === undefined || t.status === 200 ? "ok" : t.status === 0 || (t.status >= 500 && t.status !== 503) ? "unknown" : "refused");
        const { at: _at, resend: _resend, outcome: _outcome, ...rest } = t;
        history.push({ type: "complete", op, try: i, t: t.at[1], outcome, status: t.status ?? (outcome === "ok" ? 200 : 0), ...rest });
      });
      return op;
    },
    fault(kind: FaultKind, start: number, end: number) {
      history.push({ type: "fault", t: start, kind, phase: "start" }, { type: "fault", t: end, kind, phase: "end" });
      history.sort((a, b) => a.t - b.t);
    },
  };
}

export const record = (payment_id: string, status: string, amounts: Partial<Record<"authorized" | "capturable" | "captured" | "refunded", string>> = {}, request_id?: number): RecordView => ({
  payment_id,
  status,
  amount_authorized: amounts.authorized ?? "0.00",
  amount_capturable: amounts.capturable ?? "0.00",
  amount_captured: amounts.captured ?? "0.00",
  amount_refunded: amounts.refunded ?? "0.00",
  payment_method_id: "pm_card_visa",
  ...(request_id === undefined ? {} : { request_id }),
});
