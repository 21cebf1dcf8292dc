// Subscriptions: $all with a stream-prefix filter (the namespace, or the given prefixes), one event
// handled at a time, the checkpoint kept client-side and used to resubscribe after a drop.
import type { Subscriber, Subscription } from "../port/subscribe.js";
import type { Kurrent } from "./client.js";
import { filterFor, fromPosition } from "./read.js";

export function kurrentSubscriptions(k: Kurrent, retryMs: number): Subscriber & { closeAll(): Promise<void> } {
  const subscriptions = new Set<Subscription>();
  return {
    subscribeToAll({ after = 0, streamPrefixes }, onEvent): Subscription {
      let checkpoint = after; // client-side: the caller stores it; we resume from it after a drop
      let closed = false;
      let current: { unsubscribe(): Promise<void> } | undefined;
      const loop = (async () => {
        while (!closed) {
          const sub = k.client.subscribeToAll({ fromPosition: fromPosition(checkpoint), filter: filterFor(k.namespace, streamPrefixes) });
          current = sub;
          try {
            for await (const r of sub) {
              if (closed) break;
              if (!r.event || !k.ours(r.event.streamId)) continue;
              const e = k.toRecorded(r.event);
              if (e.position <= checkpoint) continue;
              await onEvent(e);
              checkpoint = e.position;
            }
          } catch {
            if (!closed) await new Promise((resolve) => setTimeout(resolve, retryMs));
          }
        }
      })();
      const subscription: Subscription = {
        async close() {
          closed = true;
          subscriptions.delete(subscription);
          await current?.unsubscribe().catch(() => undefined);
          await loop;
        },
      };
      subscriptions.add(subscription);
      return subscription;
    },
    async closeAll() {
      await Promise.all([...subscriptions].map((s) => s.close()));
    },
  };
}
