// The account's API keys (GET /v2/api_keys: never a key itself, only its first characters) and
// revoking one after a confirmation (DELETE /v2/api_keys/{id}). Revoking the key this tab signed in
// with signs it out, as any 401 does.
import { useState } from "preact/hooks";
import type { PageProps } from "./api.js";
import { Confirm, ErrorAlert, html, Table, time, useLoad, useSignOutOn401 } from "./ui.js";

export function KeysPage({ session, onUnauthorized }: PageProps) {
  const account = session.account.external_account_id;
  const list = useLoad((signal) => session.client.listApiKeys({ external_account_id: account }, { signal }), [account]);
  const [revoking, setRevoking] = useState<string | null>(null);
  const mine = session.account.key_id;
  const [outcome, setOutcome] = useState<{ error?: unknown; done?: string }>({});
  useSignOutOn401(list.error ?? outcome.error, onUnauthorized);
  async function revoke(id: string) {
    setRevoking(null);
    try {
      const key = await session.client.revokeApiKey({ external_account_id: account, key_id: id });
      if (key.id === mine) return onUnauthorized(); // this tab's own key: signed out at once
      setOutcome({ done: `Revoked ${key.id}: every request with it is refused from now on.` });
    } catch (error) {
      setOutcome({ error });
    }
    list.reload();
  }
  const rows = list.data?.data ?? [];
  return html`<h1>API keys</h1>
    <p class="muted">Issue a key with <code>${`npx cardflow accounts key ${account}`}</code>; it is shown once, then only its first characters.</p>
    <${ErrorAlert} error=${list.error} />
    <${Table} testid="keys" caption=${list.error ? "Not loaded" : list.loading ? "Loading…" : `${rows.length} key${rows.length === 1 ? "" : "s"}`}
      columns=${["Key", "Starts with", "Status", "Created", "Last used", "Expires", "Actions"]}
      rows=${rows.map((k) => [
        `${k.id}${k.id === mine ? " (this tab)" : ""}`,
        k.prefix ? `${k.prefix}…` : "—",
        k.status,
        time(k.created),
        k.last_used ? time(k.last_used) : "never",
        k.expires_at ? time(k.expires_at) : "never",
        k.status === "active" ? html`<button type="button" class="secondary" onClick=${() => setRevoking(k.id)}>Revoke…</button>` : "",
      ])} />
    ${outcome.done && html`<div class="notice" role="status">${outcome.done}</div>`}
    <${ErrorAlert} error=${outcome.error} />
    ${revoking && html`<${Confirm} question=${`Revoke API key ${revoking}?${revoking === mine ? " It is the key this tab signed in with: you will be signed out." : ""} Every request with it will be refused.`} confirmLabel="Yes, revoke" onConfirm=${() => void revoke(revoking)} onCancel=${() => setRevoking(null)} />`}`;
}
