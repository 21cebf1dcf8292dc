// The account's payments, newest first: a status filter, a search by payment or external id,
// and pages of 20 (GET /v2/payments).
import { useState } from "preact/hooks";
import type { PaymentStatus } from "../../client/index.js";
import type { PageProps } from "./api.js";
import { ErrorAlert, html, Status, time, useLoad, useSignOutOn401 } from "./ui.js";

const PAGE = 20;
/** Written out so the bundle does not carry the machine (xstate); the type keeps it complete. */
const STATUSES = ["requires_payment_method", "payment_method_requested", "requires_capture", "capture_requested", "succeeded", "error", "canceled"] as const satisfies readonly PaymentStatus[];
const complete: Exclude<PaymentStatus, (typeof STATUSES)[number]> extends never ? true : never = true;
void complete;

type Filter = { status: string; q: string };
/** The filter in words, so the caption says which question the rows answer. */
const describe = ({ status, q }: Filter) => `${status ? `, status ${status}` : ""}${q ? `, matching “${q}”` : ""}`;

export function PaymentsPage({ session, onUnauthorized }: PageProps) {
  const account = session.account.external_account_id;
  // what is applied (and listed), and what the form holds: a re-render never resets what the
  // person is typing to the applied value
  const [filter, setFilter] = useState<Filter>({ status: "", q: "" });
  const [draft, setDraft] = useState<Filter>(filter);
  // the last payment id of each page before this one
  const [cursors, setCursors] = useState<string[]>([]);
  const starting_after = cursors[cursors.length - 1];
  const list = useLoad(
    (signal) =>
      session.client.listPayments({
        external_account_id: account,
        limit: PAGE,
        ...(filter.status ? { status: filter.status as PaymentStatus } : {}),
        ...(filter.q ? { q: filter.q } : {}),
        ...(starting_after ? { starting_after } : {}),
      }, { signal }),
    [filter, starting_after],
  );
  useSignOutOn401(list.error, onUnauthorized);
  function apply(e: Event) {
    e.preventDefault();
    const next = { status: draft.status, q: draft.q.trim() };
    if (next.status === filter.status && next.q === filter.q && cursors.length === 0) list.reload(); // the same search again: fresh rows
    else setFilter(next);
    setCursors([]);
  }
  const rows = list.data?.data ?? [];
  return html`<h1>Payments</h1>
    <form class="row" role="search" onSubmit=${apply}>
      <label>Status<select name="status" value=${draft.status} onChange=${(e: Event) => setDraft({ ...draft, status: (e.target as HTMLSelectElement).value })}>
        <option value="">Any status</option>
        ${STATUSES.map((s) => html`<option value=${s}>${s}</option>`)}
      </select></label>
      <label>Payment or external id<input name="q" type="search" value=${draft.q} onInput=${(e: Event) => setDraft({ ...draft, q: (e.target as HTMLInputElement).value })} placeholder="pi_… or order id" /></label>
      <button type="submit">Filter</button>
    </form>
    <${ErrorAlert} error=${list.error} />
    <div class="scroll"><table>
      <caption aria-live="polite" data-testid="list-state">${list.loading ? "Loading…" : `${rows.length} payment${rows.length === 1 ? "" : "s"}${describe(filter)}${cursors.length ? `, page ${cursors.length + 1}` : ""}`}</caption>
      <thead><tr><th scope="col">Payment</th><th scope="col">Status</th><th scope="col">Amount</th><th scope="col">External id</th><th scope="col">Created</th><th scope="col">Method</th></tr></thead>
      <tbody>${rows.map(
        (p) => html`<tr>
          <td><a href=${`#/payments/${encodeURIComponent(p.payment_id)}`}>${p.payment_id}</a></td>
          <td><${Status} status=${p.status} /></td>
          <td>${p.amount} ${p.currency}</td>
          <td>${p.external_transaction_id ?? ""}</td>
          <td>${time(p.date_created)}</td>
          <td>${p.payment_method_types}${p.payment ? ` · ${p.payment.brand} ${p.payment.last_4}` : ""}</td>
        </tr>`,
      )}</tbody>
    </table></div>
    <div class="pager">
      <button type="button" class="secondary" disabled=${cursors.length === 0} onClick=${() => setCursors(cursors.slice(0, -1))}>Previous page</button>
      <button type="button" class="secondary" disabled=${!list.data?.has_more} onClick=${() => setCursors([...cursors, rows[rows.length - 1]!.payment_id])}>Next page</button>
    </div>`;
}
