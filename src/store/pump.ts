// Catch-up subscriptions for adapters that can read "all events after position N":
// each subscriber reads batches after its own checkpoint, awaits its handler per event, and
// sleeps until notify() (a local append, or another process's when the store can tell: PostgreSQL's
// NOTIFY) or the poll interval. An append notified that the read did not return yet (PostgreSQL
// shows it only once every older transaction has ended) is looked for again after a short pause
// (1 ms, doubling), not a poll: a process reads its own writes without waiting for pollMs.
// Subscribers at the same checkpoint when woken (the projections' and the webhook feed's, both
// caught up) share one read: it serves them until the next notify() or the event loop's next turn.
// A failed read (the database away) or a failed handler is retried from the same checkpoint with
// a growing pause: the subscription outlives an outage and delivers every event exactly once.
import type { RecordedEvent, SubscribeOptions, Subscription } from "./port.js";

export type ReadBatch = (after: number, maxCount: number) => Promise<RecordedEvent[]>;

export interface Pump {
  /** Appends committed (here, or in another process the store heard from), up to `position` when known. */
  notify(position?: number): void;
  subscribe(options: SubscribeOptions, onEvent: (e: RecordedEvent) => Promise<void> | void): Subscription;
  closeAll(): Promise<void>;
}

export interface PumpOptions {
  batchSize?: number;
  /** How often to look for appends made by other processes (ms); 0: only on notify(). */
  pollMs?: number;
  /** Pause after the first failure (ms), doubled up to maxRetryMs. */
  retryMs?: number;
  maxRetryMs?: number;
  /** Told of each failure before the pause (logs). */
  onError?: (error: unknown) => void;
}

export function createPump(readBatch: ReadBatch, { batchSize = 500, pollMs = 0, retryMs = 100, maxRetryMs = 5_000, onError }: PumpOptions = {}): Pump {
  const wakers = new Set<() => void>();
  const open = new Set<Subscription>();
  /** The highest position notified (0: unknown). */
  let notifiedHead = 0;
  /** Reads in flight or just done, by `after:maxCount`: for the subscribers woken with this one. */
  const shared = new Map<string, Promise<RecordedEvent[]>>();
  const read = (after: number, maxCount: number) => {
    const key = `${after}:${maxCount}`;
    let batch = shared.get(key);
    if (!batch) {
      if (shared.size === 0) setImmediate(() => shared.clear());
      batch = readBatch(after, maxCount);
      shared.set(key, batch);
      batch.catch(() => shared.get(key) === batch && shared.delete(key));
    }
    return batch;
  };

  function subscribe({ after = 0, streamPrefixes }: SubscribeOptions, onEvent: (e: RecordedEvent) => Promise<void> | void): Subscription {
    let closed = false;
    let checkpoint = after;
    let wake: (() => void) | undefined;
    let dirty = true;
    const waker = () => {
      dirty = true;
      wake?.();
    };
    wakers.add(waker);
    const wanted = (e: RecordedEvent) => !streamPrefixes || streamPrefixes.some((p) => e.stream.startsWith(p));

    /** Sleeps until woken or `ms` passed (Infinity: until woken). */
    const pause = (ms: number) =>
      new Promise<void>((resolve) => {
        wake = resolve;
        if (ms < Infinity) setTimeout(resolve, ms).unref?.();
      }).then(() => void (wake = undefined));

    const loop = (async () => {
      let failures = 0;
      let behind = 0; // reads in a row that stopped short of notifiedHead
      while (!closed) {
        dirty = false;
        let batch: RecordedEvent[];
        try {
          batch = await read(checkpoint, batchSize);
          for (const e of batch) {
            if (closed) return;
            if (wanted(e)) await onEvent(e);
            checkpoint = e.position;
          }
          failures = 0;
        } catch (error) {
          if (closed) return; // the store closed under us
          onError?.(error);
          await pause(Math.min(retryMs * 2 ** failures++, maxRetryMs));
          continue;
        }
        if (batch.length === batchSize || dirty) continue;
        if (closed) return; // close() ran while a handler was awaited: nobody would wake us
        const early = checkpoint < notifiedHead ? Math.min(2 ** behind++, 1_000) : Infinity;
        if (early === Infinity) behind = 0;
        await pause(Math.min(pollMs || Infinity, early));
      }
    })();
    const subscription: Subscription = {
      async close() {
        closed = true;
        wakers.delete(waker);
        open.delete(subscription);
        wake?.();
        await loop.catch(() => undefined);
      },
    };
    open.add(subscription);
    return subscription;
  }

  return {
    notify(position = 0) {
      notifiedHead = Math.max(notifiedHead, position);
      shared.clear(); // a read from before this append may miss it
      wakers.forEach((w) => w());
    },
    subscribe,
    async closeAll() {
      await Promise.all([...open].map((s) => s.close()));
    },
  };
}
