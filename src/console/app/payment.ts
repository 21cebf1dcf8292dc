// One payment: its record, Capture / Cancel / Refund (confirmed first; refusals in words), the
// hash-chain verdict, the event timeline, the machine's diagram with this payment's path
// highlighted, and its state as of a chosen moment.
import { useState } from "preact/hooks";
import type { Payment } from "../../client/index.js";
import type { PageProps } from "./api.js";
import { Confirm, ErrorAlert, html, Status, time, useLoad, useSignOutOn401 } from "./ui.js";

type Action = { command: "capture" | "cancel" | "refund"; amount?: string };

export function PaymentPage({ session, paymentId, onUnauthorized }: PageProps & { paymentId: string }) {
  const account = session.account.external_account_id;
  const ref = { external_account_id: account, payment_id: paymentId };
  const view = useLoad(async (signal) => {
    const [audit, diagram] = await Promise.all([session.client.auditPayment(ref, { signal }), session.client.paymentDiagram({ ...ref, format: "svg" }, { signal })]);
    return { audit, svg: diagram.diagram };
  }, [paymentId]);
  const [pending, setPending] = useState<Action | null>(null);
  const [outcome, setOutcome] = useState<{ error?: unknown; done?: string } | null>(null);

  useSignOutOn401(view.error, onUnauthorized);
  if (!view.data) return html`<h1>Payment ${paymentId}</h1>${view.loading ? html`<p role="status">Loading…</p>` : html`<${ErrorAlert} error=${view.error} />`}`;
  const { audit, svg } = view.data;
  const record = audit.record!;
  const allowed = new Set(audit.allowed_next_steps);

  async function run(action: Action) {
    setPending(null);
    try {
      const { command, amount } = action;
      const after: Payment =
        command === "capture" ? await session.client.capture({ ...ref, amount: amount! }) :
        command === "refund" ? await session.client.refund({ ...ref, ...(amount ? { amount } : {}) }) :
        await session.client.cancel(ref);
      setOutcome({ done: `${command === "capture" ? "Captured" : command === "refund" ? "Refunded" : "Canceled"}: the payment is now ${after.status}.` });
    } catch (error) {
      setOutcome({ error });
    }
    view.reload();
  }
  const ask = (command: Action["command"]) => (e: Event) => {
    e.preventDefault();
    const amount = String(new FormData(e.target as HTMLFormElement).get("amount") ?? "").trim();
    setOutcome(null);
    setPending({ command, ...(amount ? { amount } : {}) });
  };
  const question = pending && (pending.command === "cancel" ? `Cancel payment ${paymentId}? This voids it.` : `${pending.command === "capture" ? "Capture" : "Refund"} ${pending.amount ?? `all of ${record.amount_refundable}`} ${record.currency} of payment ${paymentId}?`);

  return html`<h1>Payment ${paymentId}</h1>
    <section class="card" aria-labelledby="record-h">
      <h2 id="record-h">Record <${Status} status=${record.status} /></h2>
      <dl class="record">
        <dt>Status</dt><dd data-testid="status">${record.status}</dd>
        <dt>Amount</dt><dd>${record.amount} ${record.currency}</dd>
        <dt>Authorized / captured / refunded</dt><dd>${record.amount_authorized} / ${record.amount_captured} / ${record.amount_refunded}</dd>
        <dt>Capturable / refundable</dt><dd>${record.amount_capturable} / ${record.amount_refundable}</dd>
        <dt>External id</dt><dd>${record.external_transaction_id ?? "—"}</dd>
        <dt>Method</dt><dd>${record.payment_method_types}, capture ${record.capture_method}${record.terminal_id ? `, terminal ${record.terminal_id}` : ""}</dd>
        <dt>Card</dt><dd>${record.payment ? `${record.payment.brand} •••• ${record.payment.last_4}, exp ${record.payment.exp_month}/${record.payment.exp_year}` : "—"}</dd>
        <dt>Processor</dt><dd>${record.processor}${record.authorization_code ? `, authorization ${record.authorization_code}` : ""}</dd>
        ${record.last_error && html`<dt>Last error</dt><dd>${record.last_error_code}: ${record.last_error}</dd>`}
        <dt>Created</dt><dd>${time(record.date_created)}</dd>
      </dl>
    </section>

    <section class="card" aria-labelledby="actions-h">
      <h2 id="actions-h">Actions</h2>
      <div class="actions">
        <form onSubmit=${ask("capture")}><label>Capture amount<input name="amount" inputmode="decimal" defaultValue=${record.amount_capturable} disabled=${!allowed.has("capture")} /></label><button type="submit" disabled=${!allowed.has("capture")}>Capture…</button></form>
        <form onSubmit=${ask("refund")}><label>Refund amount<input name="amount" inputmode="decimal" defaultValue=${record.amount_refundable} disabled=${!allowed.has("refund")} /></label><button type="submit" disabled=${!allowed.has("refund")}>Refund…</button></form>
        <form onSubmit=${ask("cancel")}><button type="submit" class="secondary" disabled=${!allowed.has("cancel")}>Cancel payment…</button></form>
      </div>
      <p class="muted">Allowed now: ${audit.allowed_next_steps.join(", ") || "nothing (final)"}.</p>
      ${outcome?.done && html`<div class="notice" role="status">${outcome.done}</div>`}
      <${ErrorAlert} error=${outcome?.error} />
      ${pending && html`<${Confirm} question=${question} confirmLabel=${`Yes, ${pending.command}`} onConfirm=${() => void run(pending)} onCancel=${() => setPending(null)} />`}
    </section>

    <section class="card" aria-labelledby="chain-h">
      <h2 id="chain-h">Hash chain</h2>
      <p class=${`verdict ${audit.chain}`} data-testid="chain">${audit.chain === "intact" ? "Intact: every event's hash and its link to the event before verify." : "Broken: the events were changed after they were written."}</p>
      <p class="muted">Head hash <code>${audit.head_hash ?? "—"}</code>. Read models ${audit.read_models === "equal" ? "equal a fresh replay of the events" : audit.read_models}.</p>
      ${audit.findings.length > 0 && html`<ul>${audit.findings.map((f) => html`<li><strong>${f.kind}</strong>: ${f.message}</li>`)}</ul>`}
    </section>

    <section class="card" aria-labelledby="timeline-h">
      <h2 id="timeline-h">Timeline</h2>
      <div class="scroll"><table data-testid="timeline">
        <caption>${audit.timeline.length} events, oldest first</caption>
        <thead><tr><th scope="col">#</th><th scope="col">Event</th><th scope="col">Time</th><th scope="col">Request</th><th scope="col">Actor</th><th scope="col">Status</th><th scope="col">Captured / refunded</th></tr></thead>
        <tbody>${audit.timeline.map(
          (r) => html`<tr>
            <td>${r.revision + 1}</td><td>${r.type}${r.allowed ? "" : " (refused by the machine)"}</td><td>${time(r.timestamp)}</td>
            <td>${r.request_id}</td><td>${r.actor ?? "—"}</td><td>${r.status_before} → ${r.status_after}</td><td>${r.amounts_after.captured} / ${r.amounts_after.refunded}</td>
          </tr>`,
        )}</tbody>
      </table></div>
    </section>

    <section class="card" aria-labelledby="diagram-h">
      <h2 id="diagram-h">Path through the payment machine</h2>
      <figure>
        <div class="diagram" data-testid="diagram" dangerouslySetInnerHTML=${{ __html: svg }}></div>
        <figcaption class="muted">Every state and transition of the machine; this payment's path is highlighted and its steps numbered (the same diagram as <code>cardflow diagram --payment ${paymentId}</code>).</figcaption>
      </figure>
    </section>

    <${AsOf} ...${{ session, paymentId, timeline: audit.timeline.map((r) => r.timestamp) }} />`;
}

function AsOf({ session, paymentId, timeline }: { session: PageProps["session"]; paymentId: string; timeline: string[] }) {
  const [at, setAt] = useState<string | null>(null);
  const result = useLoad(async (signal) => (at ? session.client.paymentAsOf({ external_account_id: session.account.external_account_id, payment_id: paymentId, timestamp: at }, { signal }) : null), [at]);
  const first = timeline[0]?.slice(0, 19) ?? "";
  function submit(e: Event) {
    e.preventDefault();
    const value = String(new FormData(e.target as HTMLFormElement).get("at") ?? "");
    if (value) setAt(`${value.length === 16 ? `${value}:00` : value}Z`); // the picker's value is read as UTC
  }
  const record = result.data?.record;
  return html`<section class="card" aria-labelledby="asof-h">
    <h2 id="asof-h">State as of a moment</h2>
    <form class="row" onSubmit=${submit}>
      <label>As of (UTC)<input name="at" type="datetime-local" step="1" required defaultValue=${first} /></label>
      <button type="submit">Show</button>
    </form>
    <${ErrorAlert} error=${result.error} />
    ${result.data !== undefined && result.data !== null && html`<div role="status" data-testid="as-of">
      ${record
        ? html`At ${time(result.data.timestamp)} the payment was <${Status} status=${record.status} />: authorized ${record.amount_authorized}, captured ${record.amount_captured}, refunded ${record.amount_refunded} ${record.currency} (after event ${Number(result.data.revision) + 1}).`
        : html`At ${time(result.data.timestamp)} the payment did not exist yet.`}
    </div>`}
  </section>`;
}
