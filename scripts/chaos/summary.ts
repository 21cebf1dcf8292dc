// What a run reports: operations by kind and outcome, faults injected by kind, anomalies by kind
// (as a table or JSON), and on failure the history of the first failing payment alone: its
// operations' tries, its events and the processor's record of its calls.
import type { Anomaly, LedgerEntry } from "./checker/index.js";
import { attemptIdOf, buildModel } from "./checker/model.js";
import type { Entry } from "./history.js";
import type { RecordedEvent } from "../../src/store/port.js";

export interface Summary {
  store: string;
  seed: number;
  seconds: number;
  defect: string | null;
  /** By kind: how many operations ended ok, refused, unknown (and their tries). */
  operations: Record<string, { ok: number; refused: number; unknown: number; tries: number }>;
  faults: Record<string, number>;
  anomalies: Record<string, number>;
  payments: number;
  events: number;
  ledger: number;
  /** Server processes that exited without being killed (restarted as a supervisor would). */
  crashes: number;
}

interface SummaryInput {
  crashes: number;
  store: string;
  seed: number;
  seconds: number;
  defect: string | null;
  history: readonly Entry[];
  events: readonly RecordedEvent[];
  ledger: ReadonlyArray<readonly [string, LedgerEntry]>;
  anomalies: readonly Anomaly[];
}

export function summarize({ history, events, ledger, anomalies, ...run }: SummaryInput): Summary {
  const model = buildModel(history, events);
  const operations: Summary["operations"] = {};
  for (const op of model.ops) {
    const row = (operations[op.kind] ??= { ok: 0, refused: 0, unknown: 0, tries: 0 });
    const last = op.tries.filter((t) => t.complete).at(-1)?.complete;
    row[op.ok ? "ok" : (last?.outcome ?? "unknown")]++;
    row.tries += op.tries.length;
  }
  const count = <T>(items: readonly T[], key: (t: T) => string) => items.reduce<Record<string, number>>((acc, t) => ((acc[key(t)] = (acc[key(t)] ?? 0) + 1), acc), {});
  return {
    ...run,
    operations,
    faults: count(history.filter((e) => e.type === "fault" && e.phase === "start"), (e) => (e as { kind: string }).kind),
    anomalies: count(anomalies, (a) => `${a.check}:${a.kind}`),
    payments: model.payments.size,
    events: events.length,
    ledger: ledger.length,
  };
}

export function table(s: Summary): string {
  const lines = [`chaos run: ${s.store}, ${s.seconds} s, seed ${s.seed}${s.defect ? `, seeded defect ${s.defect}` : ""}`, ""];
  const pad = (cells: Array<string | number>) => cells.map((c, i) => (i === 0 ? String(c).padEnd(16) : String(c).padStart(8))).join(" ");
  lines.push(pad(["operation", "ok", "refused", "unknown", "tries"]));
  const total = { ok: 0, refused: 0, unknown: 0, tries: 0 };
  for (const [kind, r] of Object.entries(s.operations).sort()) {
    lines.push(pad([kind, r.ok, r.refused, r.unknown, r.tries]));
    for (const k of Object.keys(total) as Array<keyof typeof total>) total[k] += r[k];
  }
  lines.push(pad(["total", total.ok, total.refused, total.unknown, total.tries]), "");
  lines.push(`faults injected: ${Object.entries(s.faults).map(([k, n]) => `${k} ${n}`).join(", ") || "none"}`);
  lines.push(`store: ${s.payments} payments, ${s.events} events; processor ledger: ${s.ledger} calls; server crashes: ${s.crashes}`);
  const anomalies = Object.entries(s.anomalies);
  lines.push(`anomalies: ${anomalies.length ? anomalies.map(([k, n]) => `${k} ${n}`).join(", ") : "none"}`);
  return lines.join("\n");
}

/** The failing payment's history alone: its anomalies, its operations' tries, its events and ledger entries. */
export function paymentHistory(paymentId: string, history: readonly Entry[], events: readonly RecordedEvent[], ledger: ReadonlyArray<readonly [string, LedgerEntry]>, anomalies: readonly Anomaly[]): string {
  const model = buildModel(history, events);
  const ops = new Set(model.ops.filter((op) => op.payment_id === paymentId || op.tries.some((t) => t.complete?.records?.some((r) => r.payment_id === paymentId) || t.complete?.record?.payment_id === paymentId)).map((op) => op.op));
  const stream = model.payments.get(paymentId)?.events ?? [];
  const attempts = new Set(stream.map(attemptIdOf).filter((id): id is string => id !== null));
  return [
    `payment ${paymentId}`,
    ...anomalies.filter((a) => a.payment_id === paymentId).map((a) => `  anomaly ${a.check}:${a.kind}: ${a.message}`),
    "history:",
    ...history.filter((e) => e.type !== "fault" && e.type !== "clock" && ops.has(e.op)).map((e) => `  ${JSON.stringify(e)}`),
    "events:",
    ...stream.map((e) => `  ${e.revision} ${e.type} ${JSON.stringify(e.data)} key=${e.metadata.idempotency_key ?? "-"} request=${e.metadata.request_id} actor=${e.metadata.actor}`),
    "processor ledger:",
    ...ledger.filter(([k]) => attempts.has(k)).map(([k, v]) => `  ${k} ${JSON.stringify(v)}`),
  ].join("\n");
}
