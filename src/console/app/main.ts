// The cardflow web console: sign in with an API key, then the account's payments, one payment's
// page, the event feed, webhook endpoints, terminals and customer cards, kept live by the event
// stream. Preact + htm (no build-time JSX), hash routes with their filters in the URL.
import { render } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { isUnauthorized, resumeSession, signIn, signOut, type PageProps, type Session } from "./api.js";
import { KeysPage } from "./keys.js";
import { LiveMark, LiveProvider } from "./live.js";
import { PaymentPage } from "./payment.js";
import { PaymentsPage } from "./payments.js";
import { CardsPage, TerminalsPage } from "./resources.js";
import { useRoute } from "./router.js";
import { ErrorAlert, html } from "./ui.js";
import { DeliveriesPage } from "./deliveries.js";
import { EventsPage, WebhooksPage } from "./webhooks.js";

/** Said on the sign-in page after a tab was signed out because its key stopped working. */
const KEY_STOPPED = "Signed out: the API key this tab used is no longer valid (revoked or expired). Sign in with another key.";

function SignIn({ onSignedIn, notice }: { onSignedIn: (s: Session) => void; notice?: string | null }) {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [key, setKey] = useState("");
  // autofocus acts on the page's load only: shown after a sign-out or a revocation, the removed
  // page's focus would be left on <body>
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => input.current?.focus(), []);
  async function submit(e: Event) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      onSignedIn(await signIn(key.trim()));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }
  return html`<main id="main" class="signin"><section class="card">
    <h1>cardflow console</h1>
    ${notice && html`<div class="notice" role="status" data-testid="signed-out">${notice}</div>`}
    <form onSubmit=${submit}>
      <label>API key<input ref=${input} name="key" type="password" autocomplete="off" required autofocus value=${key} onInput=${(e: Event) => setKey((e.target as HTMLInputElement).value)} /></label>
      <p class="muted">Kept in this browser tab only (sessionStorage); closing the tab signs you out. Create a key with <code>${"npx cardflow accounts key <account>"}</code>.</p>
      <button type="submit" disabled=${busy}>${busy ? "Signing in…" : "Sign in"}</button>
      <${ErrorAlert} error=${error} />
    </form>
  </section></main>`;
}

const NAV = [
  ["payments", "Payments"],
  ["events", "Events"],
  ["webhooks", "Webhooks"],
  ["terminals", "Terminals"],
  ["cards", "Customer cards"],
  ["keys", "API keys"],
] as const;

function Shell({ session, onSignOut, onUnauthorized }: { session: Session; onSignOut: () => void; onUnauthorized: () => void }) {
  const route = useRoute();
  const main = useRef<HTMLElement>(null);
  const [page, id] = route.parts;
  // a new page (not a new filter): move focus to it, as a page load would for a screen reader
  useEffect(() => main.current?.focus(), [page, id, route.invalid]);
  // the focused control removed or disabled (by what it confirmed: a revoked key's button, a
  // capture no longer allowed) would leave the focus on <body>: it goes to the page instead
  const keepFocus = (e: FocusEvent) => {
    const from = e.target as Element;
    queueMicrotask(() => {
      if (document.activeElement === document.body && (!from.isConnected || from.matches(":disabled"))) main.current?.focus();
    });
  };
  const props: PageProps = { session, onUnauthorized };
  const content =
    route.invalid !== undefined ? html`<h1>Not a valid address</h1><p>The address <code>#${route.invalid}</code> cannot be read: a <code>%</code> in it does not start a valid escape. <a href="#/payments">Go to the payments</a>.</p>` :
    page === "payments" && id ? html`<${PaymentPage} key=${id} ...${props} paymentId=${id} />` :
    page === "terminals" ? html`<${TerminalsPage} ...${props} />` :
    page === "cards" ? html`<${CardsPage} ...${props} route=${route} />` :
    // keyed: another endpoint is a fresh page (no notice, confirmation or answer of the one before)
    page === "webhooks" && id ? html`<${DeliveriesPage} key=${id} ...${props} endpointId=${id} route=${route} />` :
    page === "webhooks" ? html`<${WebhooksPage} ...${props} />` :
    page === "events" ? html`<${EventsPage} ...${props} route=${route} />` :
    page === "keys" ? html`<${KeysPage} ...${props} />` :
    html`<${PaymentsPage} ...${props} route=${route} />`;
  return html`<${LiveProvider} session=${session} onUnauthorized=${onUnauthorized}>
    <a class="skip" href="#main" onClick=${(e: Event) => (e.preventDefault(), main.current?.focus())}>Skip to content</a>
    <header>
      <span class="brand">cardflow</span>
      <nav aria-label="Main">
        ${NAV.map(([path, words]) => html`<a href=${`#/${path}`} aria-current=${page === path ? "page" : undefined}>${words}</a>`)}
      </nav>
      <div class="who">
        <${LiveMark} />
        <span>Account <strong>${session.account.external_account_id}</strong></span>
        <button type="button" onClick=${onSignOut}>Sign out</button>
      </div>
    </header>
    <main id="main" tabindex="-1" ref=${main} onFocusOut=${keepFocus}>${content}</main>
  </${LiveProvider}>`;
}

/** The service failed to resume the session (no answer, or an error answer other than 401): the key is kept. */
function Unreachable({ error, onRetry }: { error: unknown; onRetry: () => void }) {
  // shown again after Try again: its button (removed while loading) takes the focus back, not <body>
  const retry = useRef<HTMLButtonElement>(null);
  useEffect(() => retry.current?.focus(), []);
  return html`<main id="main" class="signin"><section class="card"><h1>cardflow console</h1><${ErrorAlert} error=${error} /><button type="button" ref=${retry} onClick=${onRetry}>Try again</button></section></main>`;
}

/** The session resuming; after Try again (its button gone) it holds the focus, not <body>. */
function Resuming({ focus }: { focus: boolean }) {
  const status = useRef<HTMLParagraphElement>(null);
  useEffect(() => void (focus && status.current?.focus()), []);
  return html`<p role="status" tabindex="-1" ref=${status}>Loading…</p>`;
}

function App() {
  // undefined: resuming; `failed`: the service did not answer, or answered an error (not a sign-out)
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [failed, setFailed] = useState<unknown>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [retried, setRetried] = useState(false);
  const resume = () => {
    setFailed(null);
    setSession(undefined);
    // a key refused on reload (revoked while the tab's stream was not connected): said, as the stream's end says it
    resumeSession().then(setSession, (error: unknown) => (isUnauthorized(error) ? setNotice(KEY_STOPPED) : setFailed(error), setSession(null)));
  };
  useEffect(resume, []);
  if (failed) return html`<${Unreachable} error=${failed} onRetry=${() => (setRetried(true), resume())} />`;
  if (session === undefined) return html`<${Resuming} focus=${retried} />`;
  if (session === null) return html`<${SignIn} onSignedIn=${(s: Session) => (setNotice(null), setSession(s))} notice=${notice} />`;
  const end = (why: string | null) => (signOut(), setNotice(why), setSession(null));
  return html`<${Shell} session=${session} onSignOut=${() => end(null)} onUnauthorized=${() => end(KEY_STOPPED)} />`;
}

render(html`<${App} />`, document.getElementById("app")!);
