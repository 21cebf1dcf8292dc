// The cardflow web console: sign in with an API key, then the account's payments, one payment's
// record, timeline, path through the machine, hash-chain verdict, state as of a moment and
// actions, its terminals and customer cards. Preact + htm (no build-time JSX), hash routes.
import { render } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { resumeSession, signIn, signOut, type Session } from "./api.js";
import { PaymentPage } from "./payment.js";
import { PaymentsPage } from "./payments.js";
import { CardsPage, TerminalsPage } from "./resources.js";
import { ErrorAlert, html } from "./ui.js";

function useHashRoute(): string {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const onChange = () => setHash(location.hash);
    addEventListener("hashchange", onChange);
    return () => removeEventListener("hashchange", onChange);
  }, []);
  return hash.replace(/^#/, "") || "/payments";
}

function SignIn({ onSignedIn }: { onSignedIn: (s: Session) => void }) {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  async function submit(e: Event) {
    e.preventDefault();
    const key = String(new FormData(e.target as HTMLFormElement).get("key") ?? "").trim();
    setBusy(true);
    try {
      onSignedIn(await signIn(key));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }
  return html`<main id="main" class="signin"><section class="card">
    <h1>cardflow console</h1>
    <form onSubmit=${submit}>
      <label>API key<input name="key" type="password" autocomplete="off" required autofocus /></label>
      <p class="muted">Kept in this browser tab only (sessionStorage); closing the tab signs you out. Create a key with <code>npx cardflow accounts key &lt;account&gt;</code>.</p>
      <button type="submit" disabled=${busy}>Sign in</button>
      <${ErrorAlert} error=${error} />
    </form>
  </section></main>`;
}

function Shell({ session, onSignOut }: { session: Session; onSignOut: () => void }) {
  const route = useHashRoute();
  const main = useRef<HTMLElement>(null);
  // a new page: move focus to its heading region, as a page load would for a screen reader
  useEffect(() => main.current?.focus(), [route]);
  const [, page, id] = route.split("/").map(decodeURIComponent);
  const props = { session, onUnauthorized: onSignOut };
  const content =
    page === "payments" && id ? html`<${PaymentPage} ...${props} paymentId=${id} />` :
    page === "terminals" ? html`<${TerminalsPage} ...${props} />` :
    page === "cards" ? html`<${CardsPage} ...${props} />` :
    html`<${PaymentsPage} ...${props} />`;
  return html`<header>
      <span class="brand">cardflow</span>
      <nav aria-label="Main">
        <a href="#/payments">Payments</a><a href="#/terminals">Terminals</a><a href="#/cards">Customer cards</a>
        <span>Account <strong>${session.account.external_account_id}</strong></span>
        <button type="button" onClick=${onSignOut}>Sign out</button>
      </nav>
    </header>
    <main id="main" tabindex="-1" ref=${main}>${content}</main>`;
}

function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  useEffect(() => {
    void resumeSession().then(setSession);
  }, []);
  if (session === undefined) return html`<p role="status">Loading…</p>`;
  if (session === null) return html`<${SignIn} onSignedIn=${setSession} />`;
  return html`<${Shell} session=${session} onSignOut=${() => (signOut(), setSession(null))} />`;
}

render(html`<${App} />`, document.getElementById("app")!);
