// The account's terminals (GET /v2/hardware) and a customer's cards on file (GET /v1/customer/card).
import { useState } from "preact/hooks";
import type { PageProps } from "./api.js";
import { ErrorAlert, html, time, useLoad, useSignOutOn401 } from "./ui.js";

export function TerminalsPage({ session, onUnauthorized }: PageProps) {
  const account = session.account.external_account_id;
  const list = useLoad((signal) => session.client.listTerminals({ external_account_id: account }, { signal }), [account]);
  useSignOutOn401(list.error, onUnauthorized);
  const rows = list.data?.data ?? [];
  return html`<h1>Terminals</h1>
    <${ErrorAlert} error=${list.error} />
    <div class="scroll"><table>
      <caption>${list.loading ? "Loading…" : `${rows.length} terminal${rows.length === 1 ? "" : "s"}`}</caption>
      <thead><tr><th scope="col">Terminal</th><th scope="col">Type</th><th scope="col">Label</th><th scope="col">Serial number</th><th scope="col">Registered</th></tr></thead>
      <tbody>${rows.map((t) => html`<tr><td>${t.terminal_id}</td><td>${t.terminal_type}</td><td>${t.label ?? ""}</td><td>${t.serial_number ?? ""}</td><td>${time(t.date_created)}</td></tr>`)}</tbody>
    </table></div>`;
}

export function CardsPage({ session, onUnauthorized }: PageProps) {
  const account = session.account.external_account_id;
  const [customer, setCustomer] = useState("");
  const list = useLoad(async (signal) => (customer ? session.client.listCustomerCards({ external_account_id: account, external_customer_id: customer }, { signal }) : null), [customer]);
  useSignOutOn401(list.error, onUnauthorized);
  const rows = list.data?.data ?? [];
  return html`<h1>Customer cards</h1>
    <form class="row" role="search" onSubmit=${(e: Event) => (e.preventDefault(), setCustomer(String(new FormData(e.target as HTMLFormElement).get("customer") ?? "").trim()))}>
      <label>External customer id<input name="customer" required defaultValue=${customer} /></label>
      <button type="submit">Show cards</button>
    </form>
    <${ErrorAlert} error=${list.error} />
    ${customer && html`<div class="scroll"><table>
      <caption>${list.loading ? "Loading…" : `${rows.length} card${rows.length === 1 ? "" : "s"} on file for ${customer}`}</caption>
      <thead><tr><th scope="col">Card token</th><th scope="col">Card</th><th scope="col">Expires</th><th scope="col">Holder</th><th scope="col">Saved from</th><th scope="col">Saved</th></tr></thead>
      <tbody>${rows.map((c) => html`<tr><td>${c.payment_method_id}</td><td>${c.brand} •••• ${c.last_4} (${c.funding})</td><td>${c.exp_month}/${c.exp_year}</td><td>${c.cardholder_name ?? ""}</td><td><a href=${`#/payments/${encodeURIComponent(c.payment_id)}`}>${c.payment_id}</a></td><td>${time(c.date_created)}</td></tr>`)}</tbody>
    </table></div>`}`;
}
