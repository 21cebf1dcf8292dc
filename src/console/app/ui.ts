// Small shared pieces of the console: htm bound to Preact, the error alert, status badges,
// a loader hook, and the confirmation dialog (a native <dialog>: focus trapped, Esc closes).
import { html } from "htm/preact";
import type { ComponentChildren } from "preact";
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { errorWords, isUnauthorized } from "./api.js";

export { html };

export function ErrorAlert({ error }: { error: unknown }) {
  if (error === null || error === undefined) return null;
  const { title, detail, meta } = errorWords(error);
  return html`<div class="alert" role="alert"><strong>${title}.</strong> ${detail}${meta && html`<div class="meta">${meta}</div>`}</div>`;
}

export const Status = ({ status }: { status: string }) => html`<span class=${`status ${status}`}>${status}</span>`;

/** Times in UTC to the second, as audits quote them (event times may carry any offset). */
export const time = (iso: string) => new Date(iso).toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

/** Runs `load` when its dependencies change; `reload` runs it again. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data: T | undefined; error: unknown; loading: boolean }>({ data: undefined, error: null, loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => live && setState({ data, error: null, loading: false }),
      (error: unknown) => live && setState({ data: undefined, error, loading: false }),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  return { ...state, reload: useCallback(() => setTick((t) => t + 1), []) };
}

/** A <dialog> asking to confirm `question`; resolves through onConfirm / onCancel. */
export function Confirm({ question, confirmLabel, onConfirm, onCancel }: { question: ComponentChildren; confirmLabel: string; onConfirm: () => void; onCancel: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    ref.current?.showModal();
  }, []);
  return html`<dialog ref=${ref} aria-labelledby="confirm-question" onCancel=${onCancel}>
    <p id="confirm-question">${question}</p>
    <div class="actions">
      <button type="button" onClick=${onConfirm}>${confirmLabel}</button>
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
