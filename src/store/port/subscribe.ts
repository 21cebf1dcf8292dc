// Catch-up subscriptions to every stream.
import type { RecordedEvent } from "./events.js";

export interface SubscribeOptions {
  /** Deliver events after this checkpoint (exclusive), then live ones. Default 0. */
  after?: number;
  /** Only streams whose name starts with one of these prefixes. */
  streamPrefixes?: string[];
}

export interface Subscription {
  close(): Promise<void>;
}

export interface Subscriber {
  /**
   * Catch-up subscription: every event after the checkpoint exactly once, in global order, then
   * live events as they are committed. The handler is awaited before the next event is delivered.
   */
  subscribeToAll(options: SubscribeOptions, onEvent: (event: RecordedEvent) => Promise<void> | void): Subscription;
}
