// One webhook endpoint's deliveries (GET /v2/webhook_endpoints/{id}/deliveries): a row per event
// posted, with its attempts, the last answer and the next retry; Retry posts one again now after a
// confirmation (POST .../deliveries/{event_id}/retry), which also enables a failing endpoint again.
// Newest first, a page at a time: `#/webhooks/{id}?after=evt_…` is the page of older ones.
import { useState } from "preact/hooks";
import type { WebhookDelivery } from "../../client/index.js";
import type { PageProps } from "./api.js";
import { href, type Route } from "./router.js";
import { Confirm, ErrorAlert, html, Pager, Table, time, useLoad, useSignOutOn401 } from "./ui.js";

const PAGE = 20;

/** What happened to it, in words. */
const statusOf = (d: WebhookDelivery) => (d.delivered ? "Delivered" : d.next_attempt_at ? "Retrying" : "Failed");

export function DeliveriesPage({ session, onUnauthorized, endpointId, route }: PageProps & { endpointId: string; route: Route }) {
  const account = session.account.external_account_id;
  const ref = { external_account_id: account, endpoint_id: endpointId };
  const after = route.params.get("after") ?? "";
  // recent failures first
  const list = useLoad((signal) => session.client.listWebhookDeliveries({ ...ref, limit: PAGE, ...(after && { starting_after: after }) }, { signal }), [account, endpointId, after]);
  const [retrying, setRetrying] = useState<string | null>(null);
  const [outcome, setOutcome] = useState<{ error?: unknown; done?: string }>({});
  useSignOutOn401(list.error ?? outcome.error, onUnauthorized);
  async function retry(eventId: string) {
    setRetrying(null);
    setOutcome({});
    try {
      const row = await session.client.retryWebhookDelivery({ ...ref, event_id: eventId });
      setOutcome({ done: `Retry asked for ${row.id}: it is posted again now.${row.endpoint_reenabled ? " The endpoint was failing and is enabled again." : ""}` });
    } catch (error) {
      setOutcome({ error });
    }
    list.reload();
  }
  const rows = list.data?.data ?? [];
  return html`<h1>Deliveries to ${endpointId}</h1>
    <p><a href="#/webhooks">All webhook endpoints</a></p>
    <${ErrorAlert} error=${list.error} />
    <${Table} testid="deliveries" caption=${list.error ? "Not loaded" : list.loading ? "Loading…" : `${rows.length} deliver${rows.length === 1 ? "y" : "ies"}${after ? `, older than ${after}` : ""}`}
      columns=${["Event", "Status", "Attempts", "Last answer", "Next retry", "Actions"]}
      rows=${rows.map((d) => [
        html`${d.event_type}<br /><span class="muted">${d.payment_id ? html`<a href=${`#/payments/${encodeURIComponent(d.payment_id)}`} title=${`Payment ${d.payment_id}`}>${d.id}</a>` : d.id}</span>`,
        statusOf(d),
        `${d.attempts}, last ${time(d.last_attempt_at)}`,
        d.error ?? (d.status_code === null ? "—" : `HTTP ${d.status_code}`),
        d.next_attempt_at ? time(d.next_attempt_at) : "—",
        d.delivered ? "" : html`<button type="button" class="secondary" onClick=${() => setRetrying(d.id)}>Retry…</button>`,
      ])} />
    <${Pager}
      first=${after && { href: href(`/webhooks/${endpointId}`), label: "Newest" }}
      next=${list.data?.has_more && { href: href(`/webhooks/${endpointId}`, { after: rows.at(-1)?.id }), label: "Older deliveries" }}
    />
    ${outcome.done && html`<div class="notice" role="status">${outcome.done}</div>`}
    <${ErrorAlert} error=${outcome.error} />
    ${retrying && html`<${Confirm} question=${`Post event ${retrying} to this endpoint again now?`} confirmLabel="Yes, retry" onConfirm=${() => void retry(retrying)} onCancel=${() => setRetrying(null)} />`}`;
}
