// One endpoint's delivery, in the process holding its lease (./delivery.ts): queues the endpoint's
// public events per stream from the feed, posts each stream's head (concurrently across streams,
// within the endpoint's breaker (./breaker.ts) and the account's slots (./account-slots.ts)),
// retries with backoff, and writes its state and the delivery rows in coalesced commits.
import { isoTimestamp } from "../clock.js";
import { CheckpointConflict } from "../store/port.js";
import { coalesced } from "../coalesced.js";
import type { AccountSlots } from "./account-slots.js";
import { backoffDelay, type Backoff } from "./backoff.js";
import { allowance, closedBreaker, recordAttempt } from "./breaker.js";
import { deliveryRow, type DeliveryRecord, type deliveryRecords } from "./delivery-records.js";
import { appendChained, webhookStreams, type EndpointDoc } from "./endpoints.js";
import { signatureHeader, SIGNATURE_HEADER } from "./signature.js";
import type { PostResult } from "./transport.js";
import { PAUSE_AFTER_ERROR_MS, type DeliveryOptions, type DeliveryState, type Pending } from "./delivery-types.js";

/** What a worker shares with the process's delivery (./delivery.ts): settings resolved, the lease owner, the account slots. */
export interface WorkerContext
  extends Pick<DeliveryOptions, "store" | "feed" | "clock" | "ids" | "secretOf" | "keyId">,
    Required<Pick<DeliveryOptions, "post" | "random" | "leaseMs" | "timeoutMs" | "concurrency" | "maxBacklog" | "onError" | "onNotice">> {
  backoff: Backoff;
  owner: string;
  slots: AccountSlots;
  records: ReturnType<typeof deliveryRecords>;
  commit(endpointId: string, state: DeliveryState, version: number, rows?: DeliveryRecord[]): Promise<unknown>;
  /** Marked failing by this process, with the position of that event. */
  failed: Map<string, number>;
  /** The worker ended (stopped, or lost its lease). */
  ended(endpointId: string): void;
}

export type Worker = ReturnType<typeof startWorker>;

export function startWorker(ctx: WorkerContext, endpoint: EndpointDoc, state: DeliveryState, version: number) {
  const { store, feed, clock, ids, secretOf, keyId, post, backoff, random, leaseMs, timeoutMs, concurrency, maxBacklog, onError, onNotice, owner, slots, records, commit, failed } = ctx;
  const { endpoint_id, external_account_id, url, event_types } = endpoint;
  let stopping = false;
  /** stop()'s bound: posts still out then are left as a crash leaves them. */
  let stopBy = Infinity;
  let lost = false;
  /** Set by the first stream past the horizon: the others in flight then do not mark it again. */
  let markedFailing = false;
  let dirty = true;
  /** The feed moved since the last scan (or the scan stopped at the backlog bound): scan on the next turn. */
  let unscanned = true;
  let wakeUp: (() => void) | undefined;
  const inFlight = new Map<string, Promise<void>>();
  const breaker = (state.breaker ??= closedBreaker());
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

  /**
   * The rows of the streams' failed heads, their next attempt written again: null once the endpoint
   * is marked failing (nothing posts them until it is enabled again), the time they are due once a
   * retry makes them due again. The row an attempt wrote and not yet committed is the newest.
   */
  async function restamp(streams: Pending[], nextAttempt: (pending: Pending) => string | null): Promise<void> {
    for (const pending of streams) {
      if (!pending.head_event_id) continue;
      const row = rows.get(pending.head_event_id) ?? (await records.get(endpoint_id, pending.head_event_id));
      const next_attempt_at = nextAttempt(pending);
      if (row && !row.delivered && row.next_attempt_at !== next_attempt_at) rows.set(row.id, { ...row, next_attempt_at });
    }
  }

  /** A retry asked through the API (any process): the stream whose head is that event is due now. */
  async function takeRetry(): Promise<void> {
    const asked = await records.retryAsked(endpoint_id);
    if (!asked || asked.at <= (state.retry_seen ?? 0)) return;
    state.retry_seen = asked.at;
    const due: Pending[] = [];
    for (const pending of Object.values(state.pending)) {
      const retried = pending.head_event_id === asked.event_id;
      if (retried) pending.next_at = 0;
      // enabled again after failing: every stream gets a fresh horizon (else the next failure marks it failing at once)
      if (asked.reenabled) pending.first_failed_at = null;
      if (retried || asked.reenabled) due.push(pending);
    }
    // asked for now: the open breaker lets it through as its probe (enabled again: it starts closed)
    if (asked.reenabled) Object.assign(breaker, closedBreaker());
    else breaker.probe_at = 0;
    // their rows (null while the endpoint was failing) say when they are due again, as the retry's answer did
    const now = clock.now();
    await restamp(due, (pending) => isoTimestamp(Math.max(pending.next_at, breaker.probe_at, now)));
    await persist();
  }

  /** Queues the endpoint's public events after its cursor, per stream. */
  async function scan(): Promise<void> {
    for (;;) {
      const backlog = Object.values(state.pending).reduce((n, p) => n + p.queue.length, 0);
      if (backlog >= maxBacklog) return void (unscanned = true);
      const batch = await feed.entries({ account: external_account_id }, state.scanned, Math.min(500, maxBacklog - backlog));
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
    const entry = await feed.entry(pending.queue[0]!);
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
    const change = recordAttempt(breaker, delivered, started, now, backoff, random);
    // past the horizon: this payment's event, or the endpoint failing in a row since then
    const failing = !delivered && now - Math.min(pending.first_failed_at ?? started, breaker.since ?? started) >= backoff.horizonMs;
    if (delivered) {
      pending.queue.shift();
      Object.assign(pending, { attempts: 0, next_at: 0, first_failed_at: null, head_event_id: null });
      if (pending.queue.length === 0) delete state.pending[stream];
    } else {
      Object.assign(pending, { attempts: attempt, next_at: now + backoffDelay(attempt, backoff, random), first_failed_at: pending.first_failed_at ?? started, head_event_id: entry.event.id });
    }
    const error = result.error ?? (delivered ? null : `HTTP ${result.status}`);
    // recovered: the backlog held back while it failed is due now
    if (change === "closed") for (const other of Object.values(state.pending)) other.next_at = Math.min(other.next_at, now);
    if (change) onNotice({ endpoint_id, external_account_id, change, failures: breaker.failures, ...(breaker.since !== null && { since: isoTimestamp(breaker.since) }), last_error: error });
    const { event } = entry;
    const next = Math.max(pending.next_at, breaker.probe_at);
    rows.set(event.id, deliveryRow(endpoint_id, event, { attempts: attempt, delivered, status_code: result.status, error, duration_ms: now - started, last_attempt_at: isoTimestamp(now), next_attempt_at: delivered || failing || markedFailing ? null : isoTimestamp(next) }));
    await persist();
    // once per endpoint: other streams in flight may pass the horizon in the same turn
    if (failing && !markedFailing) {
      markedFailing = stopping = true;
      failed.set(endpoint_id, Infinity);
      const data = { endpoint_id, event_id: event.id, since: isoTimestamp(Math.min(pending.first_failed_at!, breaker.since ?? Infinity)), last_error: error ?? "" };
      const appended = await appendChained(store, webhookStreams.endpoint(endpoint_id), [{ type: "WebhookEndpointFailing", version: 1, data }], { clock, ids, actor: "webhooks" }).catch((error: unknown) => {
        throw (failed.delete(endpoint_id), error); // not recorded: the next worker tries again
      });
      failed.set(endpoint_id, appended.position);
      // the other streams' failed heads are not posted either until a retry enables the endpoint again
      await restamp(Object.values(state.pending), () => null);
      await persist();
      onNotice({ endpoint_id, external_account_id, change: "failing", failures: breaker.failures, since: data.since, last_error: error });
    }
  }

  /** The streams in the order they are tried: while failing (one post at a time), the one due longest first, so each payment gets its turn. */
  function dueFirst(allowed: number): Array<[string, Pending]> {
    const streams = Object.entries(state.pending);
    if (allowed !== 1) return streams;
    let first: [string, Pending] | undefined;
    for (const entry of streams) if (!inFlight.has(entry[0]) && (!first || entry[1].next_at < first[1].next_at)) first = entry;
    return first ? [first] : [];
  }

  /** The last turn found a due post but no free slot of the account. */
  let blocked = false;
  const loop = (async () => {
    while (!stopping) {
      dirty = false;
      try {
        slots.forget(external_account_id, wake);
        if (unscanned) {
          unscanned = false;
          await scan().catch((error: unknown) => Promise.reject((unscanned = true, error)));
        }
        await takeRetry();
        const now = clock.now();
        // <=: the loop sleeps until exactly this margin, so at that moment it must renew (< never would, and spun)
        if (state.lease!.until - now <= (leaseMs * 2) / 3) {
          state.lease = { owner, until: now + leaseMs };
          unscanned = true; // and look at the feed, whether or not it told us of something
          await persist();
        }
        blocked = false;
        const allowed = allowance(breaker, now, concurrency);
        for (const [stream, pending] of dueFirst(allowed)) {
          if (stopping || inFlight.size >= allowed) break;
          if (inFlight.has(stream) || pending.next_at > now) continue;
          if (!slots.take(external_account_id)) {
            // the account's slots are taken (by its other endpoints): woken when one is freed
            blocked = true;
            slots.wait(external_account_id, wake);
            break;
          }
          const sending = send(stream)
            .catch((error: unknown) => {
              // the store or the feed failed us, not the receiver: try this stream again shortly
              onError(error);
              const failed = state.pending[stream];
              if (failed) failed.next_at = Math.max(failed.next_at, clock.now() + PAUSE_AFTER_ERROR_MS);
            })
            .finally(() => {
              inFlight.delete(stream);
              slots.release(external_account_id);
              wake();
            });
          inFlight.set(stream, sending);
        }
      } catch (error) {
        onError(error);
        await new Promise<void>((resolve) => clock.setTimer(PAUSE_AFTER_ERROR_MS, resolve));
      }
      // slots this turn left free: the account's next waiting endpoint may use them
      if (!blocked) slots.handOn(external_account_id);
      if (stopping || dirty) continue;
      // sleep until woken (new events, a send done, a slot freed), the next retry is due, or the
      // lease needs renewing; a post waiting for a slot or for the breaker is not due before those
      let due = state.lease!.until - (leaseMs * 2) / 3;
      if (!blocked && inFlight.size < allowance(breaker, clock.now(), concurrency)) {
        for (const [stream, pending] of Object.entries(state.pending)) if (!inFlight.has(stream)) due = Math.min(due, Math.max(pending.next_at, breaker.probe_at));
      } else if (!blocked && inFlight.size === 0) due = Math.min(due, breaker.probe_at);
      await new Promise<void>((resolve) => {
        wakeUp = resolve;
        const cancel = clock.setTimer(Math.max(0, due - clock.now()), resolve);
        wakeUp = () => (cancel(), resolve());
        if (dirty) wakeUp();
      });
      wakeUp = undefined;
    }
    slots.forget(external_account_id, wake);
    // finish what was posted, then hand the endpoint over at once; posts still out at the stop's
    // bound (a receiver slower than the stop's deadline) are left as a crash leaves them: their
    // answers unrecorded, the lease handed over when it expires, the next holder posting them again
    const finished = await new Promise<boolean>((resolve) => {
      // no bound (Infinity): no timer (Node runs a timer past its longest at once)
      const cancel = stopBy === Infinity ? () => undefined : clock.setTimer(Math.max(0, stopBy - clock.now()), () => resolve(false));
      void Promise.all(inFlight.values()).then(() => (cancel(), resolve(true)));
    });
    if (!finished) lost = true;
    if (!lost) {
      state.lease = null;
      await persist().catch(onError);
    }
    ctx.ended(endpoint_id);
  })();

  return {
    account: external_account_id,
    wake,
    /** The feed indexed new events: scan them on the next turn. */
    feedMoved(): void {
      unscanned = true;
      wake();
    },
    /** Stops delivering; what is posted is awaited until `by` (a clock time), then left (see above). */
    stop(by = Infinity): Promise<void> {
      stopBy = by;
      stopping = true;
      wake();
      return loop;
    },
  };
}
