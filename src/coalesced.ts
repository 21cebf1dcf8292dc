// One writer at a time, coalescing: a call starts a run after the one in progress, and the calls
// made until that run starts share it (it carries every change made before it started).
export interface Coalesced {
  /** Resolves (or rejects) with the run this call joined. */
  (): Promise<void>;
  /** Resolves when every run started so far has ended (never rejects). */
  settled(): Promise<void>;
}

export function coalesced(run: () => Promise<void>): Coalesced {
  let last: Promise<void> = Promise.resolve();
  let queued: Promise<void> | null = null;
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
  return Object.assign(call, { settled: () => last });
}
