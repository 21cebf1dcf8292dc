// The account's payments, newest first (GET /v2/payments): search (by the start of an id or a
// reference: the API's q, in the order of the text matched) and filters held in the URL
// (shareable; Back returns to the filters before), the API's own query parameters (nothing is
// filtered in the browser), pages of 20, amounts authorized / captured / refunded / net, and
// live: an event about a payment refreshes the list.
import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import type { PaymentStatus } from "../../client/index.js";
import type { PageProps } from "./api.js";
import { money, net, STATUSES, STATUS_WORDS } from "./format.js";
import { useLiveEvents } from "./live.js";
import { href, navigate, paramsOf, type Route } from "./router.js";
import { ErrorAlert, html, Pager, Status, Table, time, useFields, useLoad, useSignOutOn401 } from "./ui.js";

const PAGE = 20;
const FILTERS = ["q", "status", "capture_method", "terminal_id", "external_customer_id"] as const;
type Filters = Record<(typeof FILTERS)[number], string>;

/** The filters the API takes one at a time without q (each has its index), in the form's words. */
const ONE_AT_A_TIME = [["status", "status"], ["capture_method", "capture"], ["terminal_id", "terminal"], ["external_customer_id", "customer"]] as const;

/** Why the API would refuse these filters (two or more of them without a search), or null. */
function filtersProblem(f: Filters): string | null {
  const set = ONE_AT_A_TIME.filter(([name]) => f[name]).map(([, words]) => words);
  if (f.q || set.length < 2) return null;
  const names = `${set.slice(0, -1).join(", ")} and ${set[set.length - 1]}`;
  return `${names[0]!.toUpperCase()}${names.slice(1)} are ${set.length === 2 ? "both" : "all"} set: filter by one of them at a time, or search as well.`;
}

/** The filters in words, so the caption says which question the rows answer (the merchant's own values isolated: <bdi>). */
function describe(f: Filters): ComponentChildren {
  const words = [
    f.status && `status ${f.status}`,
    f.capture_method && `capture ${f.capture_method}`,
    f.terminal_id && html`terminal <bdi>${f.terminal_id}</bdi>`,
    f.external_customer_id && html`customer <bdi>${f.external_customer_id}</bdi>`,
    f.q && html`matching “<bdi>${f.q}</bdi>”`,
  ].filter(Boolean);
  return words.map((word) => html`, ${word}`);
}


/** An amount in a list's cell: never broken across lines (a long id beside it wraps instead; it took the table's width and the amounts wrapped digit by digit). */
const amountCell = (amount: string, currency: string) => html`<span class="amount">${money(amount, currency)}</span>`;
export function PaymentsPage({ session, onUnauthorized, route }: PageProps & { route: Route }) {
  const account = session.account.external_account_id;
  const applied = paramsOf(route.params, FILTERS);
  const after = route.params.get("after") ?? "";
  const key = JSON.stringify([applied, after]);
  // filters the API would refuse are said beside the form, and nothing is sent: from the form, or
  // from a shared or edited URL
  const refusedByUrl = filtersProblem(applied);
  const list = useLoad(
    (signal) =>
      refusedByUrl ? Promise.resolve(null) : session.client.listPayments(
        {
          external_account_id: account,
          limit: PAGE,
          ...Object.fromEntries(Object.entries(applied).filter(([, v]) => v)),
          ...(after ? { cursor: after } : {}), // the keyset cursor: pages stay right while payments arrive
        },
        { signal },
      ),
    [key],
  );
  useSignOutOn401(list.error, onUnauthorized);
  useLiveEvents((e) => e.payment_id !== null, list.refresh);
  // the form holds what is typed; a new URL (Back, a shared link) puts its filters in the form
  const [fields, bind] = useFields<Filters>(applied, key);
  const [problem, setProblem] = useState<string | null>(refusedByUrl);
  useEffect(() => setProblem(refusedByUrl), [key]);

  function apply(e: Event) {
    e.preventDefault();
    const next = Object.fromEntries(FILTERS.map((f) => [f, fields[f].trim()])) as Filters;
    const refused = filtersProblem(next);
    setProblem(refused);
    if (refused) return;
    if (JSON.stringify([next, ""]) === key) list.reload(); // the same search again: fresh rows
    else navigate("/payments", next);
  }
  const rows = list.data?.data ?? [];
  const described = problem ? "filters-hint filters-problem" : "filters-hint";
  const caption = refusedByUrl ? "Not sent" : list.error ? "Not loaded" : list.loading ? "Loading…" : html`${rows.length} payment${rows.length === 1 ? "" : "s"}${describe(applied)}${after ? ", a later page" : ""}${list.data?.has_more ? "; more on the next page" : ""}`;
  return html`<h1>Payments</h1>
    <form class="filters" role="search" onSubmit=${apply}>
      <label>Search<input name="q" type="search" ...${bind("q")} aria-describedby="filters-hint" placeholder="start of a pi_… id or of your reference" title="Payments whose id or reference starts with this (3 characters or more; a shorter one must be the whole id or reference)" /></label>
      <label>Status<select name="status" ...${bind("status")} aria-describedby=${described} onChange=${bind("status").onInput}>
        <option value="">Any status</option>
        ${STATUSES.map((s: PaymentStatus) => html`<option value=${s}>${STATUS_WORDS[s]} (${s})</option>`)}
      </select></label>
      <label>Capture<select name="capture_method" ...${bind("capture_method")} aria-describedby=${described} onChange=${bind("capture_method").onInput}>
        <option value="">Any</option><option value="automatic">automatic</option><option value="manual">manual</option>
      </select></label>
      <label>Terminal<input name="terminal_id" ...${bind("terminal_id")} aria-describedby=${described} placeholder="tmr_…" /></label>
      <label>Customer<input name="external_customer_id" ...${bind("external_customer_id")} aria-describedby=${described} placeholder="your customer id" /></label>
      <div class="buttons"><button type="submit">Filter</button>${Object.values(applied).some(Boolean) && html`<a href="#/payments">Clear</a>`}</div>
      <p class="hint muted" id="filters-hint">Status, capture, terminal and customer: one at a time, or any of them with a search.</p>
      ${problem && html`<p class="field-problem" id="filters-problem" role="alert">${problem}</p>`}
    </form>
    <${ErrorAlert} error=${list.error} />
    <div class=${list.loading ? "busy" : ""} aria-busy=${list.loading}>
      <${Table}
        testid="list"
        caption=${caption}
        columns=${["Payment", "Status", "Amount", "Captured", "Refunded", "Net", "Customer", "Created"]}
        rows=${rows.map((p) => [
          html`<span><a href=${`#/payments/${encodeURIComponent(p.payment_id)}`}>${p.payment_id}</a>${p.external_transaction_id !== null && html`<span class="muted ref">${String(p.external_transaction_id)}</span>`}</span>`,
          html`<${Status} payment=${p} />`,
          amountCell(p.amount, p.currency),
          amountCell(p.amount_captured, p.currency),
          amountCell(p.amount_refunded, p.currency),
          amountCell(net(p), p.currency),
          p.external_customer_id ?? "—",
          time(p.date_created),
        ])}
      />
    </div>
    <${Pager}
      first=${after && { href: href("/payments", applied), label: "Newest" }}
      next=${list.data?.has_more && list.data.next_cursor && { href: href("/payments", { ...applied, after: list.data.next_cursor }), label: "Next page" }}
    />`;
}
