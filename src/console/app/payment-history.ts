// A payment's history on its page: the hash-chain verdict, the event timeline (one labelled
// block per event on a phone) and its state as of a chosen moment.
import { useState } from "preact/hooks";
import type { PaymentAudit } from "../../client/index.js";
import type { Session } from "./api.js";
import { money } from "./format.js";
import { ErrorAlert, html, Status, Table, time, useLoad } from "./ui.js";

export function Chain({ audit }: { audit: PaymentAudit }) {
  return html`<section class="card" aria-labelledby="chain-h">
    <h2 id="chain-h">Hash chain</h2>
    <p class=${`verdict ${audit.chain}`} data-testid="chain">${audit.chain === "intact" ? "Intact: every event's hash and its link to the event before verify." : "Broken: the events were changed after they were written."}</p>
    <p class="muted">Head hash <code>${audit.head_hash ?? "—"}</code>. Read models ${audit.read_models === "equal" ? "equal a fresh replay of the events" : audit.read_models}.</p>
    ${audit.findings.length > 0 && html`<ul>${audit.findings.map((f) => html`<li><strong>${f.kind}</strong>: ${f.message}</li>`)}</ul>`}
  </section>`;
}

export function Timeline({ audit }: { audit: PaymentAudit }) {
  return html`<section class="card" aria-labelledby="timeline-h">
    <h2 id="timeline-h">Timeline</h2>
    <${Table}
      testid="timeline"
      caption=${`${audit.timeline.length} events, oldest first`}
      columns=${["#", "Event", "Time", "Request", "Actor", "Status", "Captured / refunded", "Detail"]}
      rows=${audit.timeline.map((r) => [
        String(r.revision + 1),
        `${r.type}${r.allowed ? "" : " (refused by the machine)"}`,
        time(r.timestamp),
        String(r.request_id),
        r.actor ?? "—",
        `${r.status_before} → ${r.status_after}`,
        `${r.amounts_after.captured} / ${r.amounts_after.refunded}`,
        r.detail ?? "—",
      ])}
    />
  </section>`;
}

/**
 * An event's time as the picker writes it (UTC, to the second), rounded up to the second: at that
 * moment the event has happened (its time may carry milliseconds and any offset).
 */
export function momentAfter(iso: string): string {
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? "" : new Date(Math.ceil(ms / 1000) * 1000).toISOString().slice(0, 19);
}

/**
 * The payment's state as of a moment; the moment offered is its latest event's, so Show at once
 * answers its state now. It follows new events (a capture here or elsewhere) until one is typed.
 */
export function AsOf({ session, paymentId, latest }: { session: Session; paymentId: string; latest: string }) {
  const [at, setAt] = useState<string | null>(null);
  const [own, setTyped] = useState<string | null>(null);
  const typed = own ?? momentAfter(latest);
  const result = useLoad(async (signal) => (at ? session.client.paymentAsOf({ external_account_id: session.account.external_account_id, payment_id: paymentId, timestamp: at }, { signal }) : null), [at]);
  function submit(e: Event) {
    e.preventDefault();
    if (typed) setAt(`${typed.length === 16 ? `${typed}:00` : typed}Z`); // the picker's value is read as UTC
  }
  const record = result.data?.record;
  return html`<section class="card" aria-labelledby="asof-h">
    <h2 id="asof-h">State as of a moment</h2>
    <form class="row" onSubmit=${submit}>
      <label>As of (UTC)<input name="at" type="datetime-local" step="1" required value=${typed} onInput=${(e: Event) => setTyped((e.target as HTMLInputElement).value)} /></label>
      <button type="submit">Show</button>
    </form>
    <${ErrorAlert} error=${result.error} />
    ${result.data !== undefined && result.data !== null && !result.loading && html`<div role="status" data-testid="as-of">
      ${record
        ? html`At ${time(result.data.timestamp)} the payment was <${Status} payment=${record} />: authorized ${money(record.amount_authorized, record.currency)}, captured ${record.amount_captured}, refunded ${record.amount_refunded} (after event ${Number(result.data.revision) + 1}).`
        : html`At ${time(result.data.timestamp)} the payment did not exist yet.`}
    </div>`}
  </section>`;
}
