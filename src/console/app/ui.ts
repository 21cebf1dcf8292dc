// Small shared pieces of the console: htm bound to Preact, the error alert, status badges,
// a loader hook, and the confirmation dialog (a native <dialog>: focus trapped, Esc closes, the
// focus back on the button that opened it, or once confirmed on the one it is given).
import { html } from "htm/preact";
import type { ComponentChildren } from "preact";
import { useCallback, useContext, useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import type { Payment } from "../../client/index.js";
import { errorWords, isUnauthorized } from "./api.js";
import { statusWords } from "./format.js";
import { Reconnects } from "./reconnects.js";

export { html };

export function ErrorAlert({ error }: { error: unknown }) {
  if (error === null || error === undefined) return null;
  const { title, detail, meta } = errorWords(error);
  return html`<div class="alert" role="alert"><strong>${title}.</strong> ${detail}${meta && html`<div class="meta">${meta}</div>`}</div>`;
}

/** The status in words; the machine's state on hover (and for screen readers, after the words). */
export const Status = ({ payment }: { payment: Pick<Payment, "status" | "amount_refunded" | "amount_captured"> }) =>
  html`<span class=${`status ${payment.status}`} title=${`machine state: ${payment.status}`} data-state=${payment.status}>${statusWords(payment)}<span class="sr-only"> (${payment.status})</span></span>`;

/** Times in UTC to the second, as audits quote them (event times may carry any offset). */
export const time = (iso: string) => new Date(iso).toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");

export interface Loaded<T> {
  /** The latest answer; while a newer load runs, the one before it (`loading` says so); after a reload failed, with keepOnError, the one before it too (`error` says so). */
  data: T | undefined;
  error: unknown;
  /** True from the render in which the dependencies changed until their answer arrives. */
  loading: boolean;
  /** Loads again now (aborting a load in flight). */
  reload: () => void;
  /** Loads again when the load in flight (if any) is done: any number of calls, one more load (live updates). */
  refresh: () => void;
}

/**
 * Runs `load` when its dependencies change; `reload` runs it again. Loads are ordered: a newer
 * one aborts the request of the one before (its AbortSignal), and an answer that arrives after a
 * newer load began is dropped, so what is shown is always the answer to the latest request. A
 * load that fails has no data (a list says "Not loaded", not what it last read), unless
 * `keepOnError` (a page whose parts must outlive a reload: what a payment's page says of a command
 * just sent), when a reload of the same dependencies keeps the data it would have replaced.
 */
export function useLoad<T>(load: (signal: AbortSignal) => Promise<T>, deps: unknown[], { keepOnError = false } = {}): Loaded<T> {
  const [tick, setTick] = useState(0);
  const of = JSON.stringify(deps);
  const key = JSON.stringify([...deps, tick]);
  // `of`: the dependencies the data was loaded for
  const [state, setState] = useState<{ data: T | undefined; error: unknown; key: string | null; of: string | null }>({ data: undefined, error: null, key: null, of: null });
  const pending = useRef<{ key: string; again: boolean }>({ key: "", again: false });
  useEffect(() => {
    const request = new AbortController();
    pending.current = { key, again: false };
    const settle = (next: (before: typeof state) => { data: T | undefined; error: unknown; of: string | null }) => {
      if (request.signal.aborted) return;
      setState((before) => ({ ...next(before), key }));
      if (pending.current.again) setTick((t) => t + 1);
    };
    load(request.signal).then(
      (data) => settle(() => ({ data, error: null, of })),
      // keepOnError: a reload that failed keeps what was shown of the same thing (the error said beside it)
      (error: unknown) => settle((before) => (keepOnError && before.of === of ? { data: before.data, error, of } : { data: undefined, error, of: null })),
    );
    return () => request.abort();
  }, [key]);
  const loading = state.key !== key;
  const reload = useCallback(() => setTick((t) => t + 1), []);
  // the live stream is back after it was lost: a load that failed meanwhile is tried again
  const reconnects = useContext(Reconnects);
  const seen = useRef(reconnects);
  useEffect(() => {
    if (reconnects === seen.current) return;
    seen.current = reconnects;
    if (state.error) reload();
  }, [reconnects]);
  const refresh = () => {
    if (loading) pending.current.again = true;
    else reload();
  };
  // derived, not set by the effect: the render that changes the dependencies already says loading
  return { data: state.data, error: state.error, loading, reload, refresh };
}

/**
 * A <dialog> asking to confirm `question`; resolves through onConfirm / onCancel. The page closes
 * it by unmounting it (its state set back to null), which a browser does not treat as closing a
 * dialog: the focus would be left on <body>. So on unmount it is closed, and the focus goes back to
 * the element that had it when the dialog opened (the button that asked), if it is still there;
 * once confirmed, to `confirmedFocus` when given (a field's Enter opened it: the action's button,
 * not the field, which is disabled while the command runs). When what was confirmed removes or
 * disables that button, the page takes the focus (main.ts).
 */
export function Confirm({ question, confirmLabel, onConfirm, onCancel, confirmedFocus }: { question: ComponentChildren; confirmLabel: string; onConfirm: () => void; onCancel: () => void; confirmedFocus?: { current: HTMLElement | null } }) {
  const ref = useRef<HTMLDialogElement>(null);
  const confirmed = useRef(false);
  useLayoutEffect(() => {
    const opener = document.activeElement instanceof HTMLElement && document.activeElement !== document.body ? document.activeElement : null;
    const dialog = ref.current; // the ref is cleared before the cleanup runs
    dialog?.showModal();
    return () => {
      if (dialog?.open) dialog.close(); // still in the document here: the page around it is no longer inert
      const back = (confirmed.current && confirmedFocus?.current) || opener;
      if (back?.isConnected) back.focus();
    };
  }, []);
  return html`<dialog ref=${ref} aria-labelledby="confirm-question" onCancel=${onCancel}>
    <p id="confirm-question">${question}</p>
    <div class="actions">
      <button type="button" onClick=${() => ((confirmed.current = true), onConfirm())}>${confirmLabel}</button>
      <button type="button" class="secondary" onClick=${onCancel} autofocus>Back</button>
    </div>
  </dialog>`;
}

/** A key that stops being valid (revoked, or the account's keys rotated) signs the person out. */
export function useSignOutOn401(error: unknown, onUnauthorized: () => void): void {
  useEffect(() => {
    if (isUnauthorized(error)) onUnauthorized();
  }, [error]);
}

/**
 * A form's fields as the person typed them: kept across re-renders, answers and errors, and put
 * back to `initial` when `from` changes (a new URL's filters, a payment's new amounts), except the
 * fields typed into since for which `keep` says so (a live refresh must not overwrite what the
 * clerk typed); `typed.has(name)` tells them, `typed.forget(name)` puts one back to `initial`
 * (what was typed is done with). The reset is a layout effect: it runs in the render that brings
 * the change, before the browser can deliver a keystroke, so it never overwrites what is typed
 * after (a deferred effect could, in headless Chromium, tens of milliseconds later).
 */
export function useFields<F extends Record<string, string>>(initial: F, from = "", keep: (name: keyof F) => boolean = () => false): [F, (name: keyof F) => { value: string; onInput: (e: Event) => void }, { has: (name: keyof F) => boolean; forget: (name: keyof F) => void }] {
  const [fields, setFields] = useState(initial);
  const edited = useRef(new Set<keyof F>()).current;
  const [forgotten, forgot] = useState(0);
  const seen = useRef({ from, forgotten });
  useLayoutEffect(() => {
    const moved = seen.current.from !== from;
    if (!moved && seen.current.forgotten === forgotten) return;
    seen.current = { from, forgotten };
    if (moved) for (const name of edited) if (!keep(name)) edited.delete(name);
    setFields((typed) => Object.fromEntries(Object.entries(initial).map(([name, value]) => [name, edited.has(name) ? typed[name] : value])) as F);
  }, [from, forgotten]);
  const bind = (name: keyof F) => ({ value: fields[name], onInput: (e: Event) => (edited.add(name), setFields((f) => ({ ...f, [name]: (e.target as HTMLInputElement).value }))) });
  return [fields, bind, { has: (name) => edited.has(name), forget: (name) => (edited.delete(name), forgot((n) => n + 1)) }];
}

/** A table that reads as a list of labelled rows on a phone (no sideways scrolling, no hidden column). */
export function Table({ caption, columns, rows, testid }: { caption: ComponentChildren; columns: string[]; rows: ComponentChildren[][]; testid?: string }) {
  return html`<table class="stack" data-testid=${testid}>
    <caption aria-live="polite" data-testid=${testid ? `${testid}-state` : undefined}>${caption}</caption>
    <thead><tr>${columns.map((c) => html`<th scope="col">${c}</th>`)}</tr></thead>
    <tbody>${rows.map((cells) => html`<tr>${cells.map((cell, i) => html`<td data-label=${columns[i]}>${cell}</td>`)}</tr>`)}</tbody>
  </table>`;
}

/**
 * A list's pager: the link back to its first page and the one to the next. Keyed: unkeyed, the
 * first page's only link ("Next page") was reused for the first link of the next page, and a
 * keyboard user's Enter on it again went back to the start.
 */
export const Pager = ({ first, next }: { first: false | undefined | { href: string; label: string }; next: false | undefined | { href: string; label: string } }) =>
  html`<nav class="pager" aria-label="Pages">
    ${first && html`<a key="first" href=${first.href}>${first.label}</a>`}
    ${next && html`<a key="next" href=${next.href}>${next.label}</a>`}
  </nav>`;
