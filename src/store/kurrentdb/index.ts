// KurrentDB (EventStoreDB) adapter over the official client, one operation per module. Nothing
// here has run against a server on the development machines (none can run there); see
// docs/stores.md for what was and was not verified. The contract suite runs against it when
// KURRENTDB_URL is set.
import type { EventStore } from "../port.js";
import { kurrentAppender } from "./append.js";
import { kurrentClient } from "./client.js";
import { kurrentIdempotency } from "./idempotency.js";
import { kurrentSequences } from "./ids.js";
import { kurrentReads } from "./read.js";
import { kurrentSubscriptions } from "./subscribe.js";

export interface KurrentStoreOptions {
  /** Connection string, e.g. `kurrentdb://localhost:2113?tls=false`. */
  url: string | undefined;
  /** Prefix of every stream this store writes and reads. Default "". */
  namespace?: string;
  /** Wait before re-subscribing after a dropped subscription (ms). Default 1,000. */
  retryMs?: number;
}

export async function createKurrentStore({ url, namespace = "", retryMs = 1000 }: KurrentStoreOptions): Promise<EventStore> {
  if (!url) throw new Error("KurrentDB store needs a connection string (set KURRENTDB_URL, e.g. kurrentdb://localhost:2113?tls=false)");
  const k = kurrentClient(url, namespace);
  const idempotency = kurrentIdempotency(k);
  const subscriptions = kurrentSubscriptions(k, retryMs);
  return {
    ...kurrentAppender(k, idempotency),
    ...kurrentReads(k),
    subscribeToAll: subscriptions.subscribeToAll,
    ...idempotency.store,
    ...kurrentSequences(k),
    async close() {
      await subscriptions.closeAll();
      await k.client.dispose();
    },
  };
}
