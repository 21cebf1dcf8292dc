// One run at a time, coalescing: a call starts a run after the one in progress, and the calls
// made until that run starts share it (it carries every change made before it started, and its
// answer is never older than any of its calls).
export interface Coalesced<T = void> {
  /** Resolves (or rejects) with the run this call joined. */
  (): Promise<T>;
  /** Resolves when every run started so far has ended (never rejects). */
  settled(): Promise<void>;
}

export function coalesced<T = void>(run: () => Promise<T>): Coalesced<T> {
  let last: Promise<unknown> = Promise.resolve();
  let queued: Promise<T> | null = null;
  const call = () => {
    if (queued) return queued;
    const next = last.then(() => {
      queued = null;
      return run();
    });
    queued = next;
    last = next.catch(() => undefined);
    return next;
  };
  return Object.assign(call, { settled: () => last.then(() => undefined) });
}
