// Webhook endpoints (create: its signing secret shown once; list; delete after a confirmation)
// and the event feed: pages oldest first by cursor (held in the URL, with the type and payment
// filters), and the events arriving live since the page opened.
import { useState } from "preact/hooks";
import type { PublicEvent } from "../../client/index.js";
import { PUBLIC_EVENT_TYPES as EVENT_TYPES, type PublicEventType } from "../../present/public-event-types.js";
import type { PageProps } from "./api.js";
import { useLiveEvents } from "./live.js";
import { href, navigate, paramsOf, type Route } from "./router.js";
import { Confirm, ErrorAlert, html, Pager, Table, time, useFields, useLoad, useSignOutOn401 } from "./ui.js";


export function WebhooksPage({ session, onUnauthorized }: PageProps) {
  const account = session.account.external_account_id;
  const list = useLoad((signal) => session.client.listWebhookEndpoints({ external_account_id: account }, { signal }), [account]);
  useSignOutOn401(list.error, onUnauthorized);
  const [fields, bind] = useFields({ url: "", types: "" });
  const [created, setCreated] = useState<{ id: string; secret: string } | null>(null);
  const [outcome, setOutcome] = useState<{ error?: unknown; done?: string }>({});
  const [deleting, setDeleting] = useState<string | null>(null);

  async function create(e: Event) {
    e.preventDefault();
    setOutcome({});
    try {
      const types = fields.types ? [fields.types as PublicEventType] : undefined;
      const endpoint = await session.client.createWebhookEndpoint({ external_account_id: account, url: fields.url.trim(), ...(types ? { event_types: types } : {}) });
      setCreated({ id: endpoint.id, secret: endpoint.secret });
      list.reload();
    } catch (error) {
      setOutcome({ error });
    }
  }
  async function remove(id: string) {
    setDeleting(null);
    try {
      await session.client.deleteWebhookEndpoint({ external_account_id: account, endpoint_id: id });
      setOutcome({ done: `Deleted ${id}: nothing more is posted to it (its events stay in the feed).` });
    } catch (error) {
      setOutcome({ error });
    }
    list.reload();
  }
  const rows = list.data?.data ?? [];
  return html`<h1>Webhooks</h1>
    <${ErrorAlert} error=${list.error} />
    <${Table} testid="endpoints" caption=${list.error ? "Not loaded" : list.loading ? "Loading…" : `${rows.length} endpoint${rows.length === 1 ? "" : "s"}`}
      columns=${["Endpoint", "URL", "Events", "Status", "Created", "Actions"]}
      rows=${rows.map((w) => [html`<a href=${`#/webhooks/${encodeURIComponent(w.id)}`} title="Its deliveries">${w.id}</a>`, w.url, w.event_types?.join(", ") ?? "all", w.status, time(w.created), html`<button type="button" class="secondary" onClick=${() => setDeleting(w.id)}>Delete…</button>`])} />
    ${outcome.done && html`<div class="notice" role="status">${outcome.done}</div>`}
    <${ErrorAlert} error=${outcome.error} />
    <section class="card" aria-labelledby="add-h">
      <h2 id="add-h">Add an endpoint</h2>
      <form class="row" onSubmit=${create}>
        <label>URL<input type="url" required ...${bind("url")} placeholder="https://example.com/cardflow" /></label>
        <label>Events<select ...${bind("types")} onChange=${bind("types").onInput}><option value="">All events</option>${EVENT_TYPES.map((t) => html`<option value=${t}>${t}</option>`)}</select></label>
        <button type="submit">Add endpoint</button>
      </form>
      ${created && html`<div class="notice" role="status" data-testid="secret">Created ${created.id}. Its signing secret, shown only now: <code>${created.secret}</code></div>`}
    </section>
    <p><a href="#/events">The event feed</a> holds every event, delivered or not.</p>
    ${deleting && html`<${Confirm} question=${`Delete webhook endpoint ${deleting}? Nothing more will be posted to it.`} confirmLabel="Yes, delete" onConfirm=${() => void remove(deleting)} onCancel=${() => setDeleting(null)} />`}`;
}

const eventRow = (e: PublicEvent) => [
  time(e.created),
  e.type,
  e.payment_id ? html`<a href=${`#/payments/${encodeURIComponent(e.payment_id)}`}>${e.payment_id}</a>` : "—",
  `#${e.sequence}`,
  String(e.request_id),
  e.id,
];
const COLUMNS = ["Time", "Type", "Payment", "Sequence", "Request", "Event"];

export function EventsPage({ session, onUnauthorized, route }: PageProps & { route: Route }) {
  const account = session.account.external_account_id;
  const { type, payment_id, after } = paramsOf(route.params, ["type", "payment_id", "after"] as const);
  const page = useLoad((signal) => session.client.listEvents({ external_account_id: account, limit: 50, ...(type ? { type } : {}), ...(payment_id ? { payment_id } : {}), ...(after ? { after } : {}) }, { signal }), [type, payment_id, after]);
  useSignOutOn401(page.error, onUnauthorized);
  const [arrived, setArrived] = useState<PublicEvent[]>([]);
  useLiveEvents((e) => (!type || e.type === type) && (!payment_id || e.payment_id === payment_id), (e) => setArrived((list) => [e, ...list].slice(0, 50)));
  const [fields, bind] = useFields({ type, payment_id }, JSON.stringify([type, payment_id])); // Back puts its filters in the form
  const rows = page.data?.data ?? [];
  return html`<h1>Events</h1>
    <form class="filters" role="search" onSubmit=${(e: Event) => (e.preventDefault(), setArrived([]), navigate("/events", { type: fields.type, payment_id: fields.payment_id.trim() }))}>
      <label>Type<select ...${bind("type")} onChange=${bind("type").onInput}><option value="">All types</option>${EVENT_TYPES.map((t) => html`<option value=${t}>${t}</option>`)}</select></label>
      <label>Payment<input ...${bind("payment_id")} placeholder="pi_…" /></label>
      <div class="buttons"><button type="submit">Filter</button></div>
    </form>
    <section class="card" aria-labelledby="arrived-h">
      <h2 id="arrived-h">Arriving now</h2>
      ${arrived.length ? html`<${Table} testid="arrived" caption=${`${arrived.length} since this page opened, newest first`} columns=${COLUMNS} rows=${arrived.map(eventRow)} />` : html`<p class="muted" data-testid="arrived-state">Nothing yet: new events appear here as they happen.</p>`}
    </section>
    <${ErrorAlert} error=${page.error} />
    <${Table} testid="events" caption=${page.error ? "Not loaded" : page.loading ? "Loading…" : `${rows.length} event${rows.length === 1 ? "" : "s"}, oldest first${after ? ` after cursor ${after}` : ""}`} columns=${COLUMNS} rows=${rows.map(eventRow)} />
    <${Pager}
      first=${after && { href: href("/events", { type, payment_id }), label: "From the start" }}
      next=${page.data?.has_more && { href: href("/events", { type, payment_id, after: page.data.next_cursor }), label: "Next page" }}
    />`;
}
