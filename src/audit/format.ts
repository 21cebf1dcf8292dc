// Human-readable text of audit results, as the CLI prints them (the JSON form is the objects).
import type { Finding, PaymentAudit, StoreAudit } from "./audit.js";
import type { ReplayReport } from "../replay.js";
import type { ReplaySummary } from "./replay.js";

function table(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join("  ").trimEnd();
  return [line(header), ...rows.map(line)];
}

export function formatFindings(findings: readonly Finding[]): string[] {
  if (findings.length === 0) return ["findings: none"];
  return [`findings: ${findings.length}`, ...findings.map((f) => `  [${f.kind}] ${f.message}`)];
}

/** The timeline of one payment, then the verdicts: recomputed state, read models, hash chain. */
export function formatAudit(report: PaymentAudit): string {
  const rows = report.timeline.map((r) => [
    String(r.revision),
    r.timestamp,
    String(r.request_id),
    // what a processor reported came from the terminal or reader the payment was on
    r.actor?.startsWith("processor:") && r.terminal_id ? `${r.actor} via ${r.terminal_id}` : (r.actor ?? "-"),
    r.type,
    `${r.status_before} → ${r.allowed ? r.status_after : `(refused; stays ${r.status_after})`}`,
    `${r.amounts_after.authorized} / ${r.amounts_after.captured} / ${r.amounts_after.refunded}`,
  ]);
  const currency = report.record?.currency ?? "";
  const chainBroken = report.findings.some((f) => ["edited", "removed", "reordered", "inserted", "revision_gap"].includes(f.kind));
  return [
    `payment ${report.payment_id} (${report.stream}): ${report.timeline.length} events`,
    "",
    ...table(["rev", "time", "request", "actor", "event", "status before → after", `authorized / captured / refunded ${currency}`.trimEnd()], rows),
    "",
    `final state (recomputed from the events): ${report.final.status}`,
    `read models: ${report.read_models === "not_compared" ? "not compared" : report.read_models === "equal" ? "equal to a fresh replay" : "DIFFER from a fresh replay"}`,
    `hash chain: ${chainBroken ? "BROKEN" : "intact"}; head ${report.head_hash ?? "(none)"}`,
    ...formatFindings(report.findings),
    ...formatDeliveries(report.deliveries),
  ].join("\n") + "\n";
}

/** The webhook deliveries of the payment's public events, when there were any. */
function formatDeliveries(deliveries: PaymentAudit["deliveries"]): string[] {
  if (deliveries.length === 0) return [];
  const rows = deliveries.map((d) => [
    d.timestamp,
    d.endpoint_id,
    `#${d.sequence} ${d.event_type}`,
    String(d.attempt),
    d.delivered ? `delivered (${d.status_code})` : `failed: ${d.error ?? "-"}${d.next_attempt_at ? `; next ${d.next_attempt_at}` : ""}`,
  ]);
  return ["", `webhook deliveries: ${deliveries.length} attempts`, ...table(["time", "endpoint", "event", "attempt", "result"], rows)];
}

export function formatStoreAudit(report: StoreAudit): string {
  return [
    `audited ${report.events} events in ${report.streams} streams (${report.payments} payments)`,
    `read models: ${report.read_models === "not_compared" ? "not compared" : report.read_models === "equal" ? "equal to a fresh replay" : "DIFFER from a fresh replay"}`,
    ...formatFindings(report.findings),
  ].join("\n") + "\n";
}

export function formatReplaySummary(summary: ReplaySummary): string {
  const statuses = Object.entries(summary.by_status).sort(([a], [b]) => a.localeCompare(b));
  return [
    `replayed ${summary.events} events (${summary.payment_events} of ${summary.payments} payments) in ${summary.duration_ms.toFixed(1)} ms`,
    "payments by status:",
    ...(statuses.length ? table(["  status", "payments"], statuses.map(([s, n]) => [`  ${s}`, String(n)])) : ["  (none)"]),
    summary.illegal.length === 0
      ? "illegal transitions: none"
      : `illegal transitions: ${summary.illegal.length}\n${summary.illegal.map((i) => `  ${i.type} at payment-${i.payment_id}@${i.revision}: ${i.refused}`).join("\n")}`,
  ].join("\n") + "\n";
}

/** One payment replayed: the state after each event. */
export function formatReplay(report: ReplayReport & { payment_id: string }): string {
  const rows = report.steps.map((s) => {
    const { amount_authorized, amount_captured, amount_refunded } = s.state.context;
    return [String(s.revision), s.type, s.allowed ? `${s.status_before} → ${s.state.status}` : `REFUSED in ${s.status_before}`, `${amount_authorized} / ${amount_captured} / ${amount_refunded}`];
  });
  return [
    `payment ${report.payment_id}: ${report.steps.length} events`,
    ...table(["rev", "event", "status before → after", "authorized / captured / refunded"], rows),
    `final: ${report.final.status}; illegal transitions: ${report.illegal.length || "none"}`,
  ].join("\n") + "\n";
}
