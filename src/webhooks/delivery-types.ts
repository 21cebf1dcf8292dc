// The options and the persisted state of webhook delivery (./delivery.ts).
import type { Clock } from "../clock.js";
import type { Ids } from "../ids.js";
import type { Outbound } from "../outbound/client.js";
import type { EventStore, ReadModelStore } from "../store/port.js";
import type { Backoff } from "./backoff.js";
import type { Breaker } from "./breaker.js";
import type { EventFeed } from "./feed.js";
import type { Post } from "./transport.js";

export interface DeliveryOptions {
  store: EventStore;
  readModels: ReadModelStore;
  feed: EventFeed;
  clock: Clock;
  ids: Ids;
  secretOf(endpointId: string): string;
  /** The signing key's id: an endpoint created under another key is not signed with this one. */
  keyId: string;
  /** The guarded client receivers are posted with (src/outbound/client.ts). */
  outbound: Outbound;
  backoff?: Partial<Backoff>;
  /** Jitter source, [0, 1). */
  random?: () => number;
  /** How long a process keeps an endpoint without renewing (renewed at a third of it). Default 30 s. */
  leaseMs?: number;
  /** The receiver must answer within this. Default 10 s. */
  timeoutMs?: number;
  /** Streams posted at once per endpoint. Default 16. */
  concurrency?: number;
  /** Posts in flight at once for all the endpoints of one account, in this process. Default 16. */
  accountConcurrency?: number;
  /** Pending events per endpoint before it stops reading ahead in the feed (bounds its state). Default 10,000. */
  maxBacklog?: number;
  post?: Post;
  onError?: (error: unknown) => void;
  /** Told once per change of an endpoint's health (breaker opened or closed, endpoint marked failing): logs, not one per attempt. */
  onNotice?: (notice: DeliveryNotice) => void;
}

export interface Pending {
  /** Positions in the feed, oldest first: the head is the one being delivered. */
  queue: number[];
  attempts: number;
  next_at: number;
  first_failed_at: number | null;
  /** The head's public event id once it failed (a retry asked through the API names it). */
  head_event_id?: string | null;
}

export interface DeliveryState {
  /** Feed position up to which this endpoint's events were queued. */
  scanned: number;
  pending: Record<string, Pending>;
  lease: { owner: string; until: number } | null;
  /** The time of the last retry asked through the API that was taken (absent: none yet). */
  retry_seen?: number;
  /** The endpoint's circuit breaker (absent in states written before it: closed). */
  breaker?: Breaker;
}

export interface DeliveryNotice {
  endpoint_id: string;
  external_account_id: string;
  /** opened: failing in a row, now probed after a backoff; closed: acknowledged again; failing: marked failing past the horizon. */
  change: "opened" | "closed" | "failing";
  failures: number;
  /** The first failure of the run (ISO), absent on closed. */
  since?: string;
  last_error?: string | null;
}


/** After the store fails (not the receiver), the pause before trying again. */
export const PAUSE_AFTER_ERROR_MS = 1_000;
/** Where an endpoint's delivery state is kept: a document of its own projection (its checkpoint is the state's version). */
export const stateName = (endpointId: string) => `webhook_delivery:${endpointId}`;
export const KEY = "state";
