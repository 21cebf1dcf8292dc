// The account's terminals (GET/POST /v2/hardware; in the sandbox, a shopper presenting a test card
// on a processor A terminal: offered only when GET /v2/account says the service runs it) and a
// customer's cards on file (GET /v1/customer/card; saving the card of a captured payment,
// POST /v1/customer/card). The customer is held in the URL.
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import type { PageProps } from "./api.js";
import { useLiveEvents } from "./live.js";
import { navigate, type Route } from "./router.js";
import { ErrorAlert, html, Table, time, useFields, useLoad, useSignOutOn401 } from "./ui.js";

const TEST_CARDS = [
  ["4242424242424242", "visa 4242: approved"],
  ["4000000000000002", "4000 0002: declined"],
] as const;

/** A form's submission: busy while it runs, its answer or refusal in words. */
function useSubmit<T>(run: () => Promise<T>, done: (answer: T) => ComponentChildren, after: () => void) {
  const [state, setState] = useState<{ busy: boolean; error?: unknown; done?: ComponentChildren }>({ busy: false });
  const submit = async (e: Event) => {
    e.preventDefault();
    setState({ busy: true });
    try {
      setState({ busy: false, done: done(await run()) });
      after();
    } catch (error) {
      setState({ busy: false, error });
    }
  };
  const outcome = html`${state.done && html`<div class="notice" role="status">${state.done}</div>`}<${ErrorAlert} error=${state.error} />`;
  return { submit, busy: state.busy, outcome };
}

export function TerminalsPage({ session, onUnauthorized }: PageProps) {
  const account = session.account.external_account_id;
  const list = useLoad((signal) => session.client.listTerminals({ external_account_id: account }, { signal }), [account]);
  useSignOutOn401(list.error, onUnauthorized);
  useLiveEvents((e) => e.type === "terminal.registered", list.refresh);
  const [fields, bind] = useFields({ terminal_type: "A_async", label: "", serial_number: "", terminal_id: "", card_number: TEST_CARDS[0][0] });
  const register = useSubmit(
    () => session.client.registerTerminal({ external_account_id: account, terminal_type: fields.terminal_type as "A_async", ...(fields.label ? { label: fields.label } : {}), ...(fields.serial_number ? { serial_number: fields.serial_number } : {}) }),
    (t) => `Registered ${t.terminal_id} (${t.terminal_type}).`,
    list.refresh,
  );
  const present = useSubmit(
    () => session.client.sandbox.presentCard({ external_account_id: account, terminal_id: fields.terminal_id, card_number: fields.card_number }),
    (p) => `The card was presented: payment ${p.payment_id} is now ${p.status}.`,
    () => undefined,
  );
  const rows = list.data?.data ?? [];
  const async = rows.filter((t) => t.terminal_type !== "B_reader");
  return html`<h1>Terminals</h1>
    <${ErrorAlert} error=${list.error} />
    <${Table} testid="terminals" caption=${list.error ? "Not loaded" : list.loading ? "Loading…" : `${rows.length} terminal${rows.length === 1 ? "" : "s"}`}
      columns=${["Terminal", "Type", "Label", "Serial number", "Registered"]}
      rows=${rows.map((t) => [t.terminal_id, t.terminal_type, t.label ?? "", t.serial_number ?? "", time(t.date_created)])} />
    <section class="card" aria-labelledby="register-h">
      <h2 id="register-h">Register a terminal</h2>
      <form class="row" onSubmit=${register.submit}>
        <label>Type<select ...${bind("terminal_type")} onChange=${bind("terminal_type").onInput}>
          <option value="A_async">A_async (processor A, asynchronous)</option><option value="A_sync">A_sync (processor A, synchronous)</option><option value="B_reader">B_reader (processor B reader)</option>
        </select></label>
        <label>Label<input ...${bind("label")} /></label>
        <label>Serial number<input ...${bind("serial_number")} /></label>
        <button type="submit" disabled=${register.busy}>Register</button>
      </form>
      ${register.outcome}
    </section>
    ${session.account.sandbox && html`<section class="card" aria-labelledby="present-h">
      <h2 id="present-h">Sandbox: present a test card</h2>
      <p class="muted">A shopper taps a test card on a processor A terminal that is waiting for one (after an auth with its terminal_id).</p>
      <form class="row" onSubmit=${present.submit}>
        <label>Terminal<select ...${bind("terminal_id")} onChange=${bind("terminal_id").onInput} required>
          <option value="">Choose a terminal</option>${async.map((t) => html`<option value=${t.terminal_id}>${t.terminal_id} (${t.terminal_type}${t.label ? `, ${t.label}` : ""})</option>`)}
        </select></label>
        <label>Test card<select ...${bind("card_number")} onChange=${bind("card_number").onInput}>${TEST_CARDS.map(([n, words]) => html`<option value=${n}>${words}</option>`)}</select></label>
        <button type="submit" disabled=${present.busy}>Present card</button>
      </form>
      ${present.outcome}
    </section>`}`;
}

export function CardsPage({ session, onUnauthorized, route }: PageProps & { route: Route }) {
  const account = session.account.external_account_id;
  const customer = route.params.get("customer") ?? "";
  const list = useLoad(async (signal) => (customer ? session.client.listCustomerCards({ external_account_id: account, external_customer_id: customer }, { signal }) : null), [customer]);
  useSignOutOn401(list.error, onUnauthorized);
  useLiveEvents((e) => e.type === "customer_card.saved", list.refresh);
  // the search follows the URL's customer (Back, a shared link); so does the save form's customer
  // field (editable: a card may be saved for another), so Save card never saves for a customer
  // left behind; its payment stays
  const [search, bindSearch] = useFields({ customer }, customer);
  const [fields, bind] = useFields({ payment_id: "" });
  const [saveFor, bindSaveFor] = useFields({ customer }, customer);
  const save = useSubmit(
    () => session.client.saveCard({ external_account_id: account, payment_id: fields.payment_id.trim(), external_customer_id: saveFor.customer.trim() }),
    (c) => html`Saved ${c.brand} •••• ${c.last_4} for <bdi>${c.external_customer_id}</bdi> as ${c.payment_method_id}.`,
    list.refresh,
  );
  const rows = list.data?.data ?? [];
  return html`<h1>Customer cards</h1>
    <form class="row" role="search" onSubmit=${(e: Event) => (e.preventDefault(), navigate("/cards", { customer: search.customer.trim() }))}>
      <label>Customer (your id)<input name="customer" required ...${bindSearch("customer")} /></label>
      <button type="submit">Show cards</button>
    </form>
    <${ErrorAlert} error=${list.error} />
    ${customer && html`<${Table} testid="cards" caption=${list.error ? "Not loaded" : list.loading ? "Loading…" : html`${rows.length} card${rows.length === 1 ? "" : "s"} on file for <bdi>${customer}</bdi>`}
      columns=${["Card token", "Card", "Expires", "Holder", "Saved from", "Saved"]}
      rows=${rows.map((c) => [c.payment_method_id, `${c.brand} •••• ${c.last_4} (${c.funding})`, `${c.exp_month}/${c.exp_year}`, c.cardholder_name ?? "", html`<a href=${`#/payments/${encodeURIComponent(c.payment_id)}`}>${c.payment_id}</a>`, time(c.date_created)])} />`}
    <section class="card" aria-labelledby="save-h">
      <h2 id="save-h">Save a payment's card for a customer</h2>
      <p class="muted">The card of a captured payment becomes a card on file of the customer (spec §4.7).</p>
      <form class="row" onSubmit=${save.submit}>
        <label>Payment<input ...${bind("payment_id")} required placeholder="pi_…" /></label>
        <label>Customer<input name="external_customer_id" ...${bindSaveFor("customer")} required /></label>
        <button type="submit" disabled=${save.busy}>Save card</button>
      </form>
      ${save.outcome}
    </section>`;
}

