// (f) No 5xx but a 503 during an injected outage (a read may answer 503 at any time when its read
// model is behind: that is a refusal, never a stale success), and reads show every write
// acknowledged before they began: a customer's cards list every card saved before, the terminal
// list every terminal registered before the run. (Payment reads are checked with (c): their
// window starts after every acknowledged write.)
//
// A 503 processor_unavailable is the answer while a processor call's outcome is unknown (the
// payment's attempt is open until the reconciler learns it, RECONCILE_GRACE_MS after it began and
// later under load): it is the documented answer as long as that attempt is open, however long
// after the fault that left it open. So it is not held to the outage's window but attributed to
// its attempt: one open on that payment when the request was decided, which an injected fault
// overlapped (a lost call, a slow processor, a server killed or a database stopped mid-call). A
// 503 processor_unavailable without such an attempt is an anomaly, at any time. So is a 503
// late_answer_pending: that call's answer landed after its attempt was abandoned, while another
// call on the payment was in flight (the reconciler records it once that call is closed).
//
// A write that waits for a read model (present_card finds its terminal's payment there) answers
// 503 read_model_behind with Retry-After when the bounded wait runs out: like a read's, that is a
// refusal, never a stale success (docs/RELIABILITY.md; the round's design notes), so it is not
// held to the outage windows either. A write acting on a stale read model is caught by (a)-(c).
import type { RecordedEvent } from "../../../src/store/port.js";
import { anomaly, type Anomaly } from "./anomaly.js";
import { attemptIdOf, timeOf, type Model } from "./model.js";

/** Outages a write may answer 503 during, and how long after one ends it may still (reconnecting). */
const OUTAGES = new Set(["terminate_connections", "database_restart", "processor_timeout"]);
export const RECOVERY_MS = 5_000;
/** Events are stamped with their command's start on the server's clock (ms), the history on the client's: the slack between them. */
const CLOCK_SLACK_MS = 1_000;
/** 503s attributed to a processor call an injected fault left open, rather than to an outage's window. */
const ATTRIBUTED = new Set(["processor_unavailable", "late_answer_pending"]);
const ATTEMPTS = new Set(["AuthorizationAttempted", "TerminalAuthorizationAttempted", "CaptureAttempted", "VoidAttempted", "RefundAttempted", "CardSaveAttempted"]);

export function checkStatuses(model: Model): Anomaly[] {
  const found: Anomaly[] = [];
  const outage = (t: number) => model.faults.some((f) => OUTAGES.has(f.kind) && f.start <= t && t <= f.end + RECOVERY_MS);
  const leftOpen = attemptsLeftOpenByFaults(model);
  for (const op of model.ops) {
    for (const t of op.tries) {
      const c = t.complete;
      if (!c) continue;
      if (c.status >= 500 && c.status !== 503) {
        found.push(anomaly("f", "server_error", op.payment_id, op.op, `${op.kind} answered ${c.status}${c.code ? ` ${c.code}` : ""}${c.error ? `: ${c.error}` : ""}`));
      } else if (c.status === 503 && ATTRIBUTED.has(c.code ?? "") && op.payment_id !== null && model.wallOffset !== null) {
        const open = (leftOpen.get(op.payment_id) ?? []).some((a) => a.opened - CLOCK_SLACK_MS <= c.t && t.invoke.t <= a.closed + CLOCK_SLACK_MS);
        if (!open) found.push(anomaly("f", "unavailable_outside_outage", op.payment_id, op.op, `${op.kind} answered 503 ${c.code} at ${c.t.toFixed(0)} ms, when no attempt an injected fault left open was open on its payment`));
      } else if (c.status === 503 && op.key !== null && c.code !== "read_model_behind" && !outage(t.invoke.t) && !outage(c.t)) {
        found.push(anomaly("f", "unavailable_outside_outage", op.payment_id, op.op, `${op.kind} answered 503 ${c.code ?? ""} at ${c.t.toFixed(0)} ms, outside any injected outage`));
      }
    }
  }
  found.push(...checkCardLists(model), ...checkTerminalLists(model));
  return found;
}

/** Per payment, the processor calls an injected fault overlapped: when each attempt was opened and closed (run time; closed: Infinity if never). */
function attemptsLeftOpenByFaults(model: Model): Map<string, Array<{ opened: number; closed: number }>> {
  const byPayment = new Map<string, Array<{ opened: number; closed: number }>>();
  for (const p of model.payments.values()) {
    p.events.forEach((e, i) => {
      const id = attemptIdOf(e);
      if (!ATTEMPTS.has(e.type) || id === null) return;
      const closing: RecordedEvent | undefined = p.events.slice(i + 1).find((x) => attemptIdOf(x) === id);
      const opened = timeOf(model, e)!;
      const closed = closing ? timeOf(model, closing)! : Infinity;
      const overlapped = model.faults.some((f) => f.start - CLOCK_SLACK_MS <= closed && opened <= f.end + CLOCK_SLACK_MS);
      if (overlapped) byPayment.set(p.payment_id, [...(byPayment.get(p.payment_id) ?? []), { opened, closed }]);
    });
  }
  return byPayment;
}

const customerOf = (path: string) => new URLSearchParams(path.split("?")[1] ?? "").get("external_customer_id");

function checkCardLists(model: Model): Anomaly[] {
  const found: Anomaly[] = [];
  const saves = model.ops.filter((op) => op.kind === "save_card" && op.ok?.ids?.length);
  for (const op of model.ops.filter((o) => o.kind === "list_cards")) {
    for (const t of op.tries) {
      if (t.complete?.outcome !== "ok") continue;
      const customer = customerOf(t.invoke.path);
      const listed = new Set(t.complete.ids ?? []);
      for (const save of saves) {
        const card = save.ok!.ids![0]!;
        const sameCustomer = (save.tries[0]!.invoke.body as { external_customer_id?: string }).external_customer_id === customer;
        if (sameCustomer && save.ok!.t < t.invoke.t && !listed.has(card)) {
          found.push(anomaly("f", "stale_read", save.payment_id, op.op, `the cards of ${customer} listed at ${t.invoke.t.toFixed(0)} ms miss ${card}, saved (op ${save.op}) and acknowledged at ${save.ok!.t.toFixed(0)} ms`));
        }
      }
    }
  }
  return found;
}

function checkTerminalLists(model: Model): Anomaly[] {
  const found: Anomaly[] = [];
  for (const op of model.ops.filter((o) => o.kind === "list_terminals")) {
    for (const t of op.tries) {
      if (t.complete?.outcome !== "ok") continue;
      const expected = (t.invoke.body as { registered?: string[] } | undefined)?.registered ?? [];
      const missing = expected.filter((id) => !(t.complete!.ids ?? []).includes(id));
      if (missing.length) found.push(anomaly("f", "stale_read", null, op.op, `the terminal list misses ${missing.join(", ")}, registered before the run`));
    }
  }
  return found;
}
