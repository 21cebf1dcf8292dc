// Delivery: the event log is the outbox. The feed (./feed.ts) indexes public events from a
// checkpointed subscription; for each endpoint, one process at a time (a lease) walks the
// endpoint's account in the feed from its own cursor and keeps, per stream (per payment), the
// positions not yet acknowledged. The head of each stream is posted; the next one only after a
// 2xx, so a payment's events arrive in order, and streams are posted concurrently, so a payment
// whose receiver fails does not hold back the others. A failure is retried with exponential
// backoff and jitter; past the horizon the endpoint is marked failing (its events stay in the feed).
//
// The delivery state (cursor, pending positions, attempts, lease) is one document per endpoint in
// the read-model store, written with compare-and-set on its version (the projection checkpoint):
// a process that lost its lease cannot write any more, and it stops. A crash between a 2xx and
// the state write redelivers that event: at least once. Each delivery's row (./delivery-records.ts:
// attempts, last answer, next try; a table of its own) is written in the same commit: operational
// state, never events.
// An account's endpoints share a bound on the posts in flight in a process (./account-slots.ts),
// and each endpoint has a circuit breaker (./breaker.ts): a receiver that keeps failing gets one
// post at a time, then only a probe after its backoff, whatever its backlog.
import { randomUUID } from "node:crypto";
import { CheckpointConflict, outageTolerantStart } from "../store/port.js";
import { coalesced } from "../coalesced.js";
import { accountSlots } from "./account-slots.js";
import { DEFAULT_BACKOFF } from "./backoff.js";
import { DELIVERIES, deliveryRecords, prepareDeliveries, rowDocs, type DeliveryRecord } from "./delivery-records.js";
import type { EndpointDoc } from "./endpoints.js";
import { FEED } from "./feed.js";
import { postWith } from "./transport.js";
import { startWorker, type Worker, type WorkerContext } from "./worker.js";

import { KEY, stateName, type DeliveryOptions, type DeliveryState } from "./delivery-types.js";
export type { DeliveryNotice, DeliveryOptions, DeliveryState } from "./delivery-types.js";
export { backoffDelay, DEFAULT_BACKOFF, type Backoff } from "./backoff.js";

export function createDelivery(options: DeliveryOptions) {
  const { readModels, feed, clock, leaseMs = 30_000, accountConcurrency = 16, onError = () => undefined } = options;
  /** This process, as a lease holder. */
  const owner = randomUUID();
  const workers = new Map<string, Worker>();
  /** Marked failing by this process, with the position of that event (until the feed shows it, or what came after). */
  const failed = new Map<string, number>();
  const commit = (endpointId: string, state: DeliveryState, version: number, rows: DeliveryRecord[] = []) =>
    readModels.commitBatch([
      { projection: stateName(endpointId), docs: [{ key: KEY, doc: state }], checkpoint: version + 1, expectedCheckpoint: version },
      ...(rows.length ? [{ projection: DELIVERIES, docs: rows.flatMap(rowDocs), checkpoint: 0 }] : []),
    ]);
  const context: WorkerContext = {
    ...options,
    post: options.post ?? postWith(options.outbound),
    backoff: { ...DEFAULT_BACKOFF, ...options.backoff },
    random: options.random ?? Math.random,
    leaseMs,
    timeoutMs: options.timeoutMs ?? 10_000,
    concurrency: options.concurrency ?? 16,
    maxBacklog: options.maxBacklog ?? 10_000,
    onError,
    onNotice: options.onNotice ?? (() => undefined),
    owner,
    slots: accountSlots(accountConcurrency),
    records: deliveryRecords(readModels),
    commit,
    failed,
    ended: (endpointId) => workers.delete(endpointId),
  };
  let running = false;
  const background = outageTolerantStart(onError);
  let cancelTick: (() => void) | undefined;
  let unsubscribe: (() => void) | undefined;

  /**
   * Where an endpoint with no delivery state starts: a new endpoint, at its creation; one whose
   * state was lost with the read models (rebuilt from the events), not before the retry horizon
   * either: an older event was acknowledged or given up on long ago, and posting the whole history
   * again would only be duplicates. The first position whose next event is younger than the
   * horizon, found by halving (event times follow positions).
   */
  async function resumeFrom(endpoint: EndpointDoc): Promise<number> {
    const cutoff = clock.now() - context.backoff.horizonMs;
    const youngAfter = async (position: number) => {
      const [next] = await options.store.readAll({ after: position, maxCount: 1 });
      return !next || Date.parse(next.metadata.timestamp) >= cutoff;
    };
    let [from, to] = [endpoint.position, Math.max(endpoint.position, await options.store.head())];
    while (from < to) {
      const middle = Math.floor((from + to) / 2);
      if (await youngAfter(middle)) to = middle;
      else from = middle + 1;
    }
    return from;
  }

  /** Takes the endpoint's lease when nobody holds it (or its holder stopped renewing). */
  async function claim(endpoint: EndpointDoc): Promise<{ state: DeliveryState; version: number } | null> {
    const name = stateName(endpoint.endpoint_id);
    const version = await readModels.checkpoint(name);
    const stored = await readModels.get<DeliveryState>(name, KEY);
    const now = clock.now();
    if (stored?.lease && stored.lease.owner !== owner && stored.lease.until > now) return null;
    // the worker changes its state in place: its own copy (documents read are shared and frozen)
    // a state past the events' head was written before the events were restored from an older backup: as lost
    const kept = stored && stored.scanned <= (await options.store.head()) ? stored : undefined;
    const state: DeliveryState = { ...(kept ? structuredClone(kept) : { scanned: await resumeFrom(endpoint), pending: {} }), lease: { owner, until: now + leaseMs } };
    try {
      await commit(endpoint.endpoint_id, state, version);
    } catch (error) {
      if (error instanceof CheckpointConflict) return null;
      throw error;
    }
    return { state, version: version + 1 };
  }


  /** Starts a worker for each enabled endpoint whose lease this process can take; stops the others. */
  async function supervise(): Promise<void> {
    const endpoints = await readModels.list<EndpointDoc>(FEED.endpoints, "");
    for (const endpoint of endpoints) {
      if (!running) return;
      const worker = workers.get(endpoint.endpoint_id);
      // the feed shows this process's failing event (or a later one, e.g. enabled again): its status speaks
      if ((endpoint.status_position ?? endpoint.position) >= (failed.get(endpoint.endpoint_id) ?? Infinity)) failed.delete(endpoint.endpoint_id);
      if (endpoint.status !== "enabled" || failed.has(endpoint.endpoint_id)) {
        if (worker) await worker.stop();
        continue;
      }
      if (worker) continue;
      const claimed = await claim(endpoint);
      if (claimed && running) workers.set(endpoint.endpoint_id, startWorker(context, endpoint, claimed.state, claimed.version));
    }
  }
  const supervising = coalesced(() => supervise().catch(onError));
  function superviseSoon() {
    if (running) void supervising();
  }
  function tick() {
    superviseSoon();
    cancelTick = clock.setTimer(Math.max(50, leaseMs / 3), tick);
  }

  return {
    owner,
    /** Wakes every worker of this process (a retry asked through the API). */
    wakers: () => [...workers.values()].map((w) => w.wake),
    /** Delivers until stop(): takes endpoints' leases, follows the feed. */
    async start(): Promise<void> {
      if (running) return;
      running = true;
      // the store away (a process started into an outage): waited out, as the feed's start does
      if ((await background.attempt(() => prepareDeliveries(readModels))) === undefined) return;
      await feed.start();
      if (!running) return; // stopped while it started: stop() has stopped the feed
      unsubscribe = feed.onIndexed((accounts) => {
        // only the workers of the accounts the batch touched scan it (every one when not known)
        for (const worker of workers.values()) if (!accounts || accounts.has(worker.account)) worker.feedMoved();
        superviseSoon();
      });
      tick();
    },
    /** Stops; a post in flight is awaited until `by` (a clock time: a stop's deadline), then left to the next holder of its endpoint. */
    async stop(by = Infinity): Promise<void> {
      running = false;
      background.stop();
      cancelTick?.();
      unsubscribe?.();
      await supervising.settled();
      await Promise.all([...workers.values()].map((w) => w.stop(by)));
      await feed.stop();
    },
  };
}

export type Delivery = ReturnType<typeof createDelivery>;
