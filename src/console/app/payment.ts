// One payment: its amounts (authorized, captured, refunded, net) and record, the actions the
// machine allows now (./payment-actions.ts), the hash-chain verdict, the timeline and its state as
// of a moment (./payment-history.ts), and the machine's diagram with its path (./diagram.ts).
// Live: an event about this payment reloads the page's data.
import type { PageProps } from "./api.js";
import { Diagram } from "./diagram.js";
import { money, net } from "./format.js";
import { useLiveEvents } from "./live.js";
import { Actions } from "./payment-actions.js";
import { AsOf, Chain, Timeline } from "./payment-history.js";
import { ErrorAlert, html, Status, time, useLoad, useSignOutOn401 } from "./ui.js";

export function PaymentPage({ session, paymentId, onUnauthorized }: PageProps & { paymentId: string }) {
  const ref = { external_account_id: session.account.external_account_id, payment_id: paymentId };
  const view = useLoad(async (signal) => {
    const [audit, diagram] = await Promise.all([session.client.auditPayment(ref, { signal }), session.client.paymentDiagram({ ...ref, format: "svg", layout: "compact" }, { signal })]);
    return { audit, svg: diagram.diagram };
    // a reload that failed (the service gone after a command) keeps the page: what its actions say
    // of the command just sent (it may have been applied) stays, beside the error
  }, [paymentId], { keepOnError: true });
  useSignOutOn401(view.error, onUnauthorized);
  useLiveEvents((e) => e.payment_id === paymentId, view.refresh);

  const heading = html`<p class="crumbs"><a href="#/payments">Payments</a></p><h1>Payment ${paymentId}</h1>`;
  if (!view.data) return html`${heading}${view.error ? html`<${ErrorAlert} error=${view.error} />` : html`<p role="status">Loading…</p>`}`;
  const { audit, svg } = view.data;
  const record = audit.record!;
  const amount = (value: string) => money(value, record.currency);
  // keyed by the payment the data is of (while another payment loads, the one before is shown):
  // each payment's state-as-of starts afresh, with a moment of its own
  const asOf = html`<${AsOf} key=${audit.payment_id} session=${session} paymentId=${audit.payment_id} latest=${audit.timeline[audit.timeline.length - 1]?.timestamp ?? ""} />`;
  return html`${heading}
    <${ErrorAlert} error=${view.error} />
    <section class="card" aria-labelledby="record-h">
      <h2 id="record-h">${amount(record.amount)} <${Status} payment=${record} /></h2>
      <dl class="amounts" data-testid="amounts">
        <div><dt>Authorized</dt><dd>${amount(record.amount_authorized)}</dd></div>
        <div><dt>Captured</dt><dd>${amount(record.amount_captured)}</dd></div>
        <div><dt>Refunded</dt><dd>${amount(record.amount_refunded)}</dd></div>
        <div><dt>Net</dt><dd>${amount(net(record))}</dd></div>
      </dl>
      <dl class="record">
        <dt>Status</dt><dd data-testid="status" title=${`machine state: ${record.status}`}>${record.status}</dd>
        <dt>Capturable / refundable</dt><dd>${amount(record.amount_capturable)} / ${amount(record.amount_refundable)}</dd>
        <dt>Reference</dt><dd>${record.external_transaction_id ?? "—"}</dd>
        <dt>Customer</dt><dd>${record.external_customer_id ? html`<a href=${`#/cards?customer=${encodeURIComponent(record.external_customer_id)}`}>${record.external_customer_id}</a>` : "—"}</dd>
        <dt>Method</dt><dd>${record.payment_method_types}, capture ${record.capture_method}${record.terminal_id ? `, terminal ${record.terminal_id}` : ""}</dd>
        <dt>Card</dt><dd>${record.payment ? `${record.payment.brand} •••• ${record.payment.last_4}, exp ${record.payment.exp_month}/${record.payment.exp_year}` : "—"}</dd>
        <dt>Processor</dt><dd>${record.processor}${record.authorization_code ? `, authorization ${record.authorization_code}` : ""}</dd>
        ${record.last_error && html`<dt>Last error</dt><dd>${record.last_error_code ? `${record.last_error_code}: ` : ""}${record.last_error}</dd>`}
        <dt>Created</dt><dd>${time(record.date_created)}</dd>
      </dl>
    </section>
    <${Actions} session=${session} audit=${audit} onDone=${view.reload} />
    <${Chain} audit=${audit} />
    <${Timeline} audit=${audit} />
    <${Diagram} svg=${svg} paymentId=${paymentId} />
    ${asOf}`;
}
