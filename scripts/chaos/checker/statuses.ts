// (f) No 5xx but a 503 during an injected outage (a read may answer 503 at any time when its read
// model is behind: that is a refusal, never a stale success), and reads show every write
// acknowledged before they began: a customer's cards list every card saved before, the terminal
// list every terminal registered before the run. (Payment reads are checked with (c): their
// window starts after every acknowledged write.)
import { anomaly, type Anomaly } from "./anomaly.js";
import type { Model } from "./model.js";

/** Outages a write may answer 503 during, and how long after one ends it may still (reconnecting). */
const OUTAGES = new Set(["terminate_connections", "database_restart", "processor_timeout"]);
export const RECOVERY_MS = 5_000;

export function checkStatuses(model: Model): Anomaly[] {
  const found: Anomaly[] = [];
  const outage = (t: number) => model.faults.some((f) => OUTAGES.has(f.kind) && f.start <= t && t <= f.end + RECOVERY_MS);
  for (const op of model.ops) {
    for (const t of op.tries) {
      const c = t.complete;
      if (!c) continue;
      if (c.status >= 500 && c.status !== 503) {
        found.push(anomaly("f", "server_error", op.payment_id, op.op, `${op.kind} answered ${c.status}${c.code ? ` ${c.code}` : ""}${c.error ? `: ${c.error}` : ""}`));
      } else if (c.status === 503 && op.key !== null && !outage(t.invoke.t) && !outage(c.t)) {
        found.push(anomaly("f", "unavailable_outside_outage", op.payment_id, op.op, `${op.kind} answered 503 ${c.code ?? ""} at ${c.t.toFixed(0)} ms, outside any injected outage`));
      }
    }
  }
  found.push(...checkCardLists(model), ...checkTerminalLists(model));
  return found;
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
