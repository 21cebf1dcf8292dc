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
// An account's endpoints share a bound on the posts in flight in a process (accountConcurrency).
import { randomUUID } from "node:crypto";
import { isoTimestamp } from "../clock.js";
import { CheckpointConflict, outageTolerantStart } from "../store/port.js";
import { coalesced } from "../coalesced.js";
import { backoffDelay, DEFAULT_BACKOFF } from "./backoff.js";
import { DELIVERIES, deliveryRecords, deliveryRow, prepareDeliveries, rowDocs, type DeliveryRecord } from "./delivery-records.js";
import { appendChained, webhookStreams, type EndpointDoc } from "./endpoints.js";
import { FEED, feedKeys, type FeedEntry } from "./feed.js";
import { signatureHeader, SIGNATURE_HEADER } from "./signature.js";
import { postWith, type PostResult } from "./transport.js";

import { KEY, PAUSE_AFTER_ERROR_MS, stateName, type DeliveryOptions, type DeliveryState } from "./delivery-types.js";
export type { DeliveryOptions, DeliveryState } from "./delivery-types.js";
export { backoffDelay, DEFAULT_BACKOFF, type Backoff } from "./backoff.js";

export function createDelivery(options: DeliveryOptions) {
  const { store, readModels, feed, clock, ids, secretOf, keyId, random = Math.random, leaseMs = 30_000, timeoutMs = 10_000, concurrency = 16, accountConcurrency = 16 } = options;
  const backoff = { ...DEFAULT_BACKOFF, ...options.backoff };
  /** Posts in flight per account, across its endpoints' workers in this process. */
  const accountInFlight = new Map<string, number>();
  const records = deliveryRecords(readModels);
  const { maxBacklog = 10_000, onError = () => undefined } = options;
  const post = options.post ?? postWith(options.outbound);
  /** This process, as a lease holder. */
  const owner = randomUUID();
  const workers = new Map<string, ReturnType<typeof startWorker>>();
  /** Marked failing by this process, with the position of that event (until the feed shows it, or what came after). */
  const failed = new Map<string, number>();
  let running = false;
  const background = outageTolerantStart(onError);
  let cancelTick: (() => void) | undefined;
  let unsubscribe: (() => void) | undefined;

  const commit = (endpointId: string, state: DeliveryState, version: number, rows: DeliveryRecord[] = []) =>
    readModels.commitBatch([
      { projection: stateName(endpointId), docs: [{ key: KEY, doc: state }], checkpoint: version + 1, expectedCheckpoint: version },
      ...(rows.length ? [{ projection: DELIVERIES, docs: rows.flatMap(rowDocs), checkpoint: 0 }] : []),
    ]);

  /** Takes the endpoint's lease when nobody holds it (or its holder stopped renewing). */
  async function claim(endpoint: EndpointDoc): Promise<{ state: DeliveryState; version: number } | null> {
    const name = stateName(endpoint.endpoint_id);
    const version = await readModels.checkpoint(name);
    const stored = await readModels.get<DeliveryState>(name, KEY);
    const now = clock.now();
    if (stored?.lease && stored.lease.owner !== owner && stored.lease.until > now) return null;
    const state: DeliveryState = { ...(stored ?? { scanned: endpoint.position, pending: {} }), lease: { owner, until: now + leaseMs } };
    try {
      await commit(endpoint.endpoint_id, state, version);
    } catch (error) {
      if (error instanceof CheckpointConflict) return null;
      throw error;
    }
    return { state, version: version + 1 };
  }

  function startWorker(endpoint: EndpointDoc, state: DeliveryState, version: number) {
    const { endpoint_id, external_account_id, url, event_types } = endpoint;
    let stopping = false;
    let lost = false;
    /** Set by the first stream past the horizon: the others in flight then do not mark it again. */
    let markedFailing = false;
    let dirty = true;
    let wakeUp: (() => void) | undefined;
    const inFlight = new Map<string, Promise<void>>();
    const wake = () => {
      dirty = true;
      wakeUp?.();
    };

    // State writes are coalesced (../coalesced.ts): a write carries every change made until it
    // starts, the delivery rows updated meanwhile included (the same commit).
    const rows = new Map<string, DeliveryRecord>();
    const persist = coalesced(async () => {
      if (lost) return;
      const written = [...rows.values()];
      rows.clear();
      try {
        await commit(endpoint_id, structuredClone(state), version, written);
        version++;
      } catch (error) {
        for (const row of written) if (!rows.has(row.id)) rows.set(row.id, row);
        if (!(error instanceof CheckpointConflict)) throw error;
        // another process took the endpoint: stop without writing again
        lost = true;
        stopping = true;
        wake();
      }
    });

    /** A retry asked through the API (any process): the stream whose head is that event is due now. */
    async function takeRetry(): Promise<void> {
      const asked = await records.retryAsked(endpoint_id);
      if (!asked || asked.at <= (state.retry_seen ?? 0)) return;
      state.retry_seen = asked.at;
      for (const pending of Object.values(state.pending)) {
        if (pending.head_event_id === asked.event_id) pending.next_at = 0;
        // enabled again after failing: every stream gets a fresh horizon (else the next failure marks it failing at once)
        if (asked.reenabled) pending.first_failed_at = null;
      }
      await persist();
    }

    /** Queues the endpoint's public events after its cursor, per stream. */
    async function scan(): Promise<void> {
      for (;;) {
        const backlog = Object.values(state.pending).reduce((n, p) => n + p.queue.length, 0);
        if (backlog >= maxBacklog) return;
        const batch = await feed.entries((p) => feedKeys.account(external_account_id, p), state.scanned, Math.min(500, maxBacklog - backlog));
        if (batch.length === 0) return;
        for (const entry of batch) {
          if (event_types && !event_types.includes(entry.event.type)) continue;
          (state.pending[entry.stream] ??= { queue: [], attempts: 0, next_at: 0, first_failed_at: null }).queue.push(entry.position);
        }
        state.scanned = batch[batch.length - 1]!.position;
        await persist();
      }
    }

    /** Posts the head of a stream; on a 2xx the next one becomes the head. */
    async function send(stream: string): Promise<void> {
      const pending = state.pending[stream]!;
      const entry = await readModels.get<FeedEntry>(FEED.events, feedKeys.all(pending.queue[0]!));
      if (!entry) throw new Error(`feed entry ${pending.queue[0]} missing`);
      const body = JSON.stringify(entry.event);
      const started = clock.now();
      const result: PostResult =
        endpoint.signing_key_id === keyId
          ? await post(url, body, { [SIGNATURE_HEADER]: signatureHeader(secretOf(endpoint_id), body, started), "Cardflow-Event-Id": entry.event.id }, { timeoutMs })
          : { status: null, error: "the service's signing key changed since this endpoint was created: create a new endpoint" };
      if (lost) return;
      const now = clock.now();
      const delivered = result.status !== null && result.status >= 200 && result.status < 300;
      const attempt = pending.attempts + 1;
      const failing = !delivered && now - (pending.first_failed_at ?? started) >= backoff.horizonMs;
      if (delivered) {
        pending.queue.shift();
        Object.assign(pending, { attempts: 0, next_at: 0, first_failed_at: null, head_event_id: null });
        if (pending.queue.length === 0) delete state.pending[stream];
      } else {
        Object.assign(pending, { attempts: attempt, next_at: now + backoffDelay(attempt, backoff, random), first_failed_at: pending.first_failed_at ?? started, head_event_id: entry.event.id });
      }
      const error = result.error ?? (delivered ? null : `HTTP ${result.status}`);
      const { event } = entry;
      rows.set(event.id, deliveryRow(endpoint_id, event, { attempts: attempt, delivered, status_code: result.status, error, duration_ms: now - started, last_attempt_at: isoTimestamp(now), next_attempt_at: delivered || failing ? null : isoTimestamp(pending.next_at) }));
      await persist();
      // once per endpoint: other streams in flight may pass the horizon in the same turn
      if (failing && !markedFailing) {
        markedFailing = stopping = true;
        failed.set(endpoint_id, Infinity);
        const data = { endpoint_id, event_id: event.id, since: isoTimestamp(pending.first_failed_at!), last_error: error ?? "" };
        const appended = await appendChained(store, webhookStreams.endpoint(endpoint_id), [{ type: "WebhookEndpointFailing", version: 1, data }], { clock, ids, actor: "webhooks" }).catch((error: unknown) => {
          throw (failed.delete(endpoint_id), error); // not recorded: the next worker tries again
        });
        failed.set(endpoint_id, appended.position);
      }
    }

    const loop = (async () => {
      while (!stopping) {
        dirty = false;
        try {
          await scan();
          await takeRetry();
          const now = clock.now();
          // <=: the loop sleeps until exactly this margin, so at that moment it must renew (< never would, and spun)
          if (state.lease!.until - now <= (leaseMs * 2) / 3) {
            state.lease = { owner, until: now + leaseMs };
            await persist();
          }
          for (const [stream, pending] of Object.entries(state.pending)) {
            if (stopping || inFlight.size >= concurrency || (accountInFlight.get(external_account_id) ?? 0) >= accountConcurrency) break;
            if (inFlight.has(stream) || pending.next_at > now) continue;
            accountInFlight.set(external_account_id, (accountInFlight.get(external_account_id) ?? 0) + 1);
            const sending = send(stream)
              .catch((error: unknown) => {
                // the store or the feed failed us, not the receiver: try this stream again shortly
                onError(error);
                const failed = state.pending[stream];
                if (failed) failed.next_at = Math.max(failed.next_at, clock.now() + PAUSE_AFTER_ERROR_MS);
              })
              .finally(() => {
                inFlight.delete(stream);
                accountInFlight.set(external_account_id, accountInFlight.get(external_account_id)! - 1);
                // the account's other endpoints may have waited for this slot
                for (const [id, worker] of workers) if (id !== endpoint_id && worker.account === external_account_id) worker.wake();
                wake();
              });
            inFlight.set(stream, sending);
          }
        } catch (error) {
          onError(error);
          await new Promise<void>((resolve) => clock.setTimer(PAUSE_AFTER_ERROR_MS, resolve));
        }
        if (stopping || dirty) continue;
        // sleep until woken (new events, a send done), the next retry is due, or the lease needs renewing
        let due = state.lease!.until - (leaseMs * 2) / 3;
        for (const [stream, pending] of Object.entries(state.pending)) if (!inFlight.has(stream)) due = Math.min(due, pending.next_at);
        await new Promise<void>((resolve) => {
          wakeUp = resolve;
          const cancel = clock.setTimer(Math.max(0, due - clock.now()), resolve);
          wakeUp = () => (cancel(), resolve());
          if (dirty) wakeUp();
        });
        wakeUp = undefined;
      }
      // finish what was posted, then hand the endpoint over at once (a crash hands it over when the lease expires)
      await Promise.all(inFlight.values());
      if (!lost) {
        state.lease = null;
        await persist().catch(onError);
      }
      workers.delete(endpoint_id);
    })();

    return {
      account: external_account_id,
      wake,
      stop(): Promise<void> {
        stopping = true;
        wake();
        return loop;
      },
    };
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
      if (claimed && running) workers.set(endpoint.endpoint_id, startWorker(endpoint, claimed.state, claimed.version));
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
      unsubscribe = feed.onIndexed(() => {
        for (const worker of workers.values()) worker.wake();
        superviseSoon();
      });
      tick();
    },
    async stop(): Promise<void> {
      running = false;
      background.stop();
      cancelTick?.();
      unsubscribe?.();
      await supervising.settled();
      await Promise.all([...workers.values()].map((w) => w.stop()));
      await feed.stop();
    },
  };
}

export type Delivery = ReturnType<typeof createDelivery>;
