// Human-readable text of audit results, as the CLI prints them (the JSON form is the objects).
import { MACHINE_VERSION } from "../../machines/definition.js";
import { chainBroken, type Finding, type PaymentAudit, type StoreAudit } from "./findings.js";
import type { AuditReplay } from "./machine-history.js";
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

const heads = (n: number) => (n === 1 ? "1 head" : `${n} heads`);
const notHeld = (a: { checked: number; held: number }) => `${a.held} held, ${a.checked - a.held} NOT held (anchor_missing below)`;

/** How many anchored heads `audit --all` looked for and found: a heads file that anchors nothing never reads as a clean pass. */
function storeAnchors(a: NonNullable<StoreAudit["anchors"]>): string {
  if (a.checked === 0) return "anchors: none given, nothing checked";
  if (a.held === a.checked) return `anchors: ${heads(a.checked)} checked, all held`;
  if (a.streams_not_in_store === a.checked) return `anchors: ${heads(a.checked)} checked, none held: not one of their streams is in the store (the heads of another store, or every anchored stream deleted)`;
  return `anchors: ${heads(a.checked)} checked, ${notHeld(a)}${a.streams_not_in_store ? `; ${a.streams_not_in_store} of their streams not in the store` : ""}`;
}

/** One payment's: only the heads of its streams are checked (none when the heads were saved before it was made). */
function paymentAnchors(a: NonNullable<PaymentAudit["anchors"]>): string {
  if (a.given === 0) return "anchors: none given, nothing checked";
  if (a.checked === 0) return `anchors: none of the ${heads(a.given)} given is this payment's: nothing checked (heads saved before the payment was made hold none of its streams)`;
  return `anchors: ${a.checked} of the ${heads(a.given)} given ${a.checked === 1 ? "is" : "are"} this payment's, ${a.held < a.checked ? notHeld(a) : a.checked === 1 ? "held" : "all held"}`;
}

/** The timeline of one payment, then the verdicts: recomputed state, read models, hash chain. */
export function formatAudit(report: PaymentAudit): string {
  const rows = report.timeline.map((r) => [
    String(r.revision),
    r.timestamp,
    String(r.request_id),
    // what a processor reported came from the terminal or reader the payment was on
    r.actor?.startsWith("processor:") && r.terminal_id ? `${r.actor} via ${r.terminal_id}` : (r.actor ?? "-"),
    r.late_answer_to ? `${r.type} (late answer to ${r.late_answer_to})` : r.type,
    `${r.status_before} → ${r.allowed ? r.status_after : `(refused; stays ${r.status_after})`}${r.allowed_by_machine ? ` (allowed by machine ${r.allowed_by_machine} at the time)` : ""}`,
    `${r.amounts_after.authorized} / ${r.amounts_after.captured} / ${r.amounts_after.refunded}`,
    r.detail ?? "",
  ]);
  const currency = report.record?.currency ?? "";
  return [
    `payment ${report.payment_id} (${report.stream}): ${report.timeline.length} events`,
    "",
    ...table(["rev", "time", "request", "actor", "event", "status before → after", `authorized / captured / refunded ${currency}`.trimEnd(), "detail"], rows),
    "",
    `machine versions: ${machineVersions(report.timeline)}`,
    `final state (recomputed from the events): ${report.final.status}`,
    `read models: ${report.read_models === "not_compared" ? "not compared" : report.read_models === "equal" ? "equal to a fresh replay" : "DIFFER from a fresh replay"}`,
    `hash chain: ${chainBroken(report.findings) ? "BROKEN" : "intact"}; head ${report.head_hash ?? "(none)"}`,
    ...(report.anchors ? [paymentAnchors(report.anchors)] : []),
    ...formatFindings(report.findings),
    ...formatDeliveries(report.deliveries),
  ].join("\n") + "\n";
}

/** Which machine decided which events, in runs of revisions: "0f3538f80922 (rev 4–9)", "before machine versions (rev 0–3)". */
function machineVersions(timeline: PaymentAudit["timeline"]): string {
  const runs: { version: string | null; from: number; to: number }[] = [];
  for (const r of timeline) {
    const last = runs.at(-1);
    if (last && last.version === r.machine_version) last.to = r.revision;
    else runs.push({ version: r.machine_version, from: r.revision, to: r.revision });
  }
  const name = (v: string | null) => (v === null ? "before machine versions" : v === MACHINE_VERSION ? `${v} (today's)` : v);
  return runs.map((r) => `${name(r.version)} (rev ${r.from === r.to ? r.from : `${r.from}–${r.to}`})`).join(", ");
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
  return ["", `webhook deliveries: ${deliveries.length} (each with its attempts so far and its last result)`, ...table(["time", "endpoint", "event", "attempts", "result"], rows)];
}

export function formatStoreAudit(report: StoreAudit): string {
  return [
    `audited ${report.events} events in ${report.streams} streams (${report.payments} payments)`,
    `read models: ${report.read_models === "not_compared" ? "not compared" : report.read_models === "equal" ? "equal to a fresh replay" : "DIFFER from a fresh replay"}${
      report.read_models_not_compared ? ` (${report.read_models_not_compared === 1 ? "1 stream" : `${report.read_models_not_compared} streams`} not compared: each holds an event no machine allowed, one that cannot be read, or one this release does not read)` : ""
    }`,
    `machine versions of payment events: ${
      Object.entries(report.machine_versions)
        .map(([v, n]) => `${v === "before_machine_versions" ? "before machine versions" : v === MACHINE_VERSION ? `${v} (today's)` : v} ${n}`)
        .join(", ") || "none"
    }`,
    ...report.allowed_by_earlier_machines.map((a) => `  ${a.type} at ${a.stream}@${a.revision}: allowed by machine ${a.machine_version} at the time`),
    ...(report.anchors ? [storeAnchors(report.anchors)] : []),
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
    // folded by revision all the same; `cardflow audit` reports them (reordered)
    ...(summary.reordered.length
      ? [`stored out of revision order (folded by revision): ${summary.reordered.length}`, ...summary.reordered.map((r) => `  ${r.type} at payment-${r.payment_id}@${r.revision} is stored at position ${r.position}, before an earlier revision of its stream`)]
      : []),
  ].join("\n") + "\n";
}

/** One payment replayed: the state after each event. */
export function formatReplay(report: AuditReplay & { payment_id: string }): string {
  const rows = report.steps.map((s) => {
    const { amount_authorized, amount_captured, amount_refunded } = s.state.context;
    const step = s.allowed ? `${s.status_before} → ${s.state.status}${s.allowed_by_machine ? ` (allowed by machine ${s.allowed_by_machine} at the time)` : ""}` : `REFUSED in ${s.status_before}: ${s.refusal!.message}`;
    return [String(s.revision), s.type, step, `${amount_authorized} / ${amount_captured} / ${amount_refunded}`];
  });
  return [
    `payment ${report.payment_id}: ${report.steps.length} events`,
    ...table(["rev", "event", "status before → after", "authorized / captured / refunded"], rows),
    `final: ${report.final.status}; illegal transitions: ${report.illegal.length || "none"}`,
  ].join("\n") + "\n";
}
