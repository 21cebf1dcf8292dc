// (c) Per payment, acknowledged operations fit one order consistent with real time in which each
// answer is what the machine gives. The store's stream fixes the order of the operations that took
// effect (their events); what remains is to check it against real time (an operation acknowledged
// before another was sent comes first) and to find, for every answer, a point of that order inside
// the answer's window where the machine's state is the one answered. An answer's window: after the
// effects of every operation acknowledged before it was sent (so reads, (f), show every earlier
// acknowledged write), before those of any operation sent after it came (a replayed answer: after
// those acknowledged before its operation's first try was sent); a write's own answer is
// the state right after its own events (and any system events that followed before another
// client's). Refusals are checked the same way against what they name: the status they found, a
// processor call in flight, an amount above what the state allowed, a payment not there yet.
import { stateOf, type PaymentSnapshot } from "../../../machines/fold.js";
import { paymentRecord } from "../../../src/present/payment-record.js";
import { Decimal } from "../../../src/money.js";
import type { Complete, RecordView } from "../history.js";
import { anomaly, type Anomaly } from "./anomaly.js";
import { decidedAnew, effectsOf, keyOf, type Model, type Op, type PaymentHistory, type Try } from "./model.js";

interface Placed {
  op: Op;
  /** Revisions of the first and last event of this operation's key on the payment. */
  first: number;
  last: number;
}

interface Window {
  lower: number;
  upper: number;
}

const v2Status = (status: string) => (status === "success" ? "succeeded" : status);

export function matches(answer: RecordView, state: PaymentSnapshot): boolean {
  if (state.value === "none") return false;
  const record = paymentRecord(stateOf(state), 0) as unknown as Record<string, unknown>;
  if (v2Status(answer.status) !== record.status) return false;
  const fields = ["amount_authorized", "amount_capturable", "amount_captured", "amount_refunded", "payment_method_id"] as const;
  return fields.every((f) => answer[f] === undefined || answer[f] === record[f]);
}

export function checkLinearizability(model: Model): Anomaly[] {
  const found: Anomaly[] = [];
  const placed = new Map<string, Placed[]>();
  for (const op of model.ops) {
    const events = effectsOf(model, op);
    if (events.length === 0) continue;
    const revisions = events.map((e) => e.revision);
    const list = placed.get(op.payment_id!) ?? [];
    list.push({ op, first: Math.min(...revisions), last: Math.max(...revisions) });
    placed.set(op.payment_id!, list);
  }
  // real time: an operation acknowledged before another was sent took effect before it
  for (const [payment_id, list] of placed) {
    for (const a of list) {
      if (!a.op.ok) continue;
      for (const b of list) {
        if (b !== a && b.op.invokedAt > a.op.ok.t && b.first < a.last) {
          found.push(anomaly("c", "real_time_order", payment_id, b.op.op, `${b.op.kind} (op ${b.op.op}, sent at ${b.op.invokedAt.toFixed(0)} ms) took effect at revision ${b.first}, before ${a.op.kind} (op ${a.op.op}) acknowledged at ${a.op.ok.t.toFixed(0)} ms (its events up to revision ${a.last})`));
        }
      }
    }
  }
  const windowOf = (payment: PaymentHistory, self: Op, invokedAt: number, completedAt: number): Window => {
    let lower = 0;
    let upper = payment.states.length - 1;
    for (const p of placed.get(payment.payment_id) ?? []) {
      if (p.op === self) continue;
      if (p.op.ok && p.op.ok.t < invokedAt) lower = Math.max(lower, p.last + 1);
      if (p.op.invokedAt > completedAt) upper = Math.min(upper, p.first);
    }
    return { lower, upper };
  };
  const report = (payment: PaymentHistory, op: Op, w: Window, ok: (s: PaymentSnapshot) => boolean, what: string, isRead: boolean) => {
    const upper = Math.min(w.upper, payment.states.length - 1);
    for (let p = w.lower; p <= upper; p++) if (ok(payment.states[p]!)) return;
    const earlier = payment.states.slice(0, w.lower).some(ok);
    const kind = earlier ? "stale_read" : "answer_not_linearizable";
    const where = `states ${w.lower}..${upper} of ${payment.states.length - 1} events (${payment.states.slice(w.lower, upper + 1).map((s) => s.value).join(", ")})`;
    found.push(anomaly(earlier && isRead ? "f" : "c", kind, payment.payment_id, op.op, `${op.kind} (op ${op.op}) answered ${what}; the machine was not so at any point of its window: ${where}`));
  };

  for (const op of model.ops) {
    const own = placed.get(op.payment_id ?? "")?.find((p) => p.op === op);
    for (const t of op.tries) {
      const c = t.complete;
      if (!c || c.outcome === "unknown") continue;
      if (c.records) {
        for (const r of c.records) {
          const payment = model.payments.get(r.payment_id);
          if (payment) report(payment, op, windowOf(payment, op, t.invoke.t, c.t), (s) => matches(r, s), describe(r), true);
          else found.push(anomaly("c", "answer_not_linearizable", r.payment_id, op.op, `${op.kind} listed payment ${r.payment_id}, which has no events`));
        }
        // a whole list (no more pages, no search) leaves out only payments not in it at some point of its window
        const query = new URLSearchParams(t.invoke.path.split("?")[1] ?? "");
        if (c.has_more === false && !query.has("q")) {
          const status = query.get("status");
          const listed = new Set(c.records.map((r) => r.payment_id));
          for (const payment of model.payments.values()) {
            if (listed.has(payment.payment_id)) continue;
            const absent = (s: PaymentSnapshot) => s.value === "none" || (status !== null && s.value !== status);
            report(payment, op, windowOf(payment, op, t.invoke.t, c.t), absent, `a list${status ? ` of ${status} payments` : ""} without it`, true);
          }
        }
      }
      const payment_id = op.payment_id ?? c.record?.payment_id ?? null;
      const payment = payment_id === null ? undefined : model.payments.get(payment_id);
      if (!payment) continue;
      const isRead = op.key === null;
      // a replayed answer was decided by an earlier try (a present_card's, say, whose answer was
      // lost): its window opens when the first try was sent
      let w = windowOf(payment, op, c.replayed ? op.invokedAt : t.invoke.t, c.t);
      if (own && c.outcome === "ok") {
        // a write answers the state right after its own events (and system events before another client's)
        const next = payment.events.find((e) => e.revision > own.last && keyOf(e) !== null && keyOf(e) !== op.key);
        w = { lower: Math.max(own.last + 1, windowOf(payment, op, op.invokedAt, c.t).lower), upper: Math.min(w.upper, next ? next.revision : Infinity) };
      }
      if (c.outcome === "ok" && c.record) report(payment, op, w, (s) => matches(c.record!, s), describe(c.record), isRead);
      else if (c.outcome === "ok" && op.kind === "list_payments" && (c.records ?? []).length === 0) report(payment, op, w, (s) => s.value === "none", "no such payment", true);
      else if (c.outcome === "refused" && !(own && op.tries.some((x) => x.complete?.outcome !== "refused") && !decidedAnew(model, op))) checkRefusal(payment, op, t, c, w, report);
    }
  }
  return found;
}

type Report = (payment: PaymentHistory, op: Op, w: Window, ok: (s: PaymentSnapshot) => boolean, what: string, isRead: boolean) => void;

/** A refusal names what it found: check the machine was so at some point of the window. */
function checkRefusal(payment: PaymentHistory, op: Op, t: Try, c: Complete, w: Window, report: Report) {
  const isRead = op.key === null;
  const amount = (t.invoke.body as { amount?: string | number } | undefined)?.amount;
  switch (c.code) {
    case "payment_intent_unexpected_state":
      if (c.current_status) report(payment, op, w, (s) => s.value === v2Status(c.current_status!) && s.context.attempt === null, `409 in status ${c.current_status}`, isRead);
      return;
    case "attempt_in_flight":
      return report(payment, op, w, (s) => s.context.attempt !== null, "409 attempt_in_flight", isRead);
    case "resource_missing":
      return report(payment, op, w, (s) => s.value === "none", "404 (no such payment)", isRead);
    case "amount_too_large": {
      if (amount === undefined) return;
      const exceeds = (s: PaymentSnapshot) => {
        const { amount_capturable, amount_captured, amount_refunded } = s.context;
        const limit = op.kind === "capture" ? new Decimal(amount_capturable) : new Decimal(amount_captured).minus(amount_refunded);
        return s.value !== "none" && new Decimal(amount).greaterThan(limit);
      };
      return report(payment, op, w, exceeds, `400 amount_too_large for ${amount}`, isRead);
    }
  }
}

const describe = (r: RecordView) =>
  `${r.status}${r.amount_authorized !== undefined ? ` (authorized ${r.amount_authorized}, capturable ${r.amount_capturable}, captured ${r.amount_captured}, refunded ${r.amount_refunded}${r.payment_method_id ? `, card ${r.payment_method_id}` : ""})` : ""}`;
