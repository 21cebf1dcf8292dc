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
  /** The latest answer; while a newer load runs, the one before it (`loading` says so). */
  data: T | undefined;
  error: unknown;
  /** True from the render in which the dependencies changed until their answer arrives. */
  loading: boolean;
  reload: () => void;
}

/**
 * Runs `load` when its dependencies change; `reload` runs it again. Loads are ordered: a newer
 * one aborts the request of the one before (its AbortSignal), and an answer that arrives after a
 * newer load began is dropped, so what is shown is always the answer to the latest request.
 */
export function useLoad<T>(load: (signal: AbortSignal) => Promise<T>, deps: unknown[]): Loaded<T> {
  const [tick, setTick] = useState(0);
  const key = JSON.stringify([...deps, tick]);
  const [state, setState] = useState<{ data: T | undefined; error: unknown; key: string | null }>({ data: undefined, error: null, key: null });
  useEffect(() => {
    const request = new AbortController();
    load(request.signal).then(
      (data) => request.signal.aborted || setState({ data, error: null, key }),
      (error: unknown) => request.signal.aborted || setState({ data: undefined, error, key }),
    );
    return () => request.abort();
  }, [key]);
  // derived, not set by the effect: the render that changes the dependencies already says loading
  return { data: state.data, error: state.error, loading: state.key !== key, reload: useCallback(() => setTick((t) => t + 1), []) };
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
