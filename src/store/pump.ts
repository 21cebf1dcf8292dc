// Catch-up subscriptions for adapters that can read "all events after position N":
// each subscriber reads batches after its own checkpoint, awaits its handler per event, and
// sleeps until notify() (a local append) or the poll interval (appends by other processes).
import type { RecordedEvent, SubscribeOptions, Subscription } from "./port.js";

export type ReadBatch = (after: number, maxCount: number) => Promise<RecordedEvent[]>;

export interface Pump {
  notify(): void;
  subscribe(options: SubscribeOptions, onEvent: (e: RecordedEvent) => Promise<void> | void): Subscription;
  closeAll(): Promise<void>;
}

export function createPump(readBatch: ReadBatch, { batchSize = 500, pollMs = 0 } = {}): Pump {
  const wakers = new Set<() => void>();
  const open = new Set<Subscription>();

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

    const loop = (async () => {
      while (!closed) {
        dirty = false;
        // A read that fails because the store closed under us ends the loop quietly.
        const batch = await readBatch(checkpoint, batchSize).catch((e: unknown) => {
          if (closed) return [];
          throw e;
        });
        for (const e of batch) {
          if (closed) return;
          if (wanted(e)) await onEvent(e);
          checkpoint = e.position;
        }
        if (batch.length === batchSize || dirty) continue;
        if (closed) return; // close() ran while a handler was awaited: nobody would wake us
        await new Promise<void>((resolve) => {
          wake = resolve;
          if (pollMs > 0) setTimeout(resolve, pollMs).unref?.();
        });
        wake = undefined;
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
    notify: () => wakers.forEach((w) => w()),
    subscribe,
    async closeAll() {
      await Promise.all([...open].map((s) => s.close()));
    },
  };
}
