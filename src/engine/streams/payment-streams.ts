// Payment streams as the engine works on them: a bounded cache of folded states, a lock per
// payment in this process, loading (cached state + events appended since, by any process),
// appending only what the machine allows with the revision the decision was made on, and
// re-deciding when another process appended first.
import { closesAttempt, isAttempt, PaymentEvent, streams, type AttemptEvent } from "../../../machines/events.js";
import { applyPaymentEvent, applyStored, hasTag, initialPaymentSnapshot, type PaymentSnapshot } from "../../../machines/fold.js";
import { setBounded } from "../../bounded.js";
import type { Clock } from "../../clock.js";
import { CardflowError, Conflict, NotFound, ProcessorUnavailable, TransitionNotAllowed } from "../../errors.js";
import { hashOf } from "../../events/chain.js";
import { newEvents } from "../../events/new-events.js";
import type { Ids } from "../../ids.js";
import type { PaymentView } from "../../processors/port.js";
import { WrongExpectedRevision, type EventStore } from "../../store/port.js";
import { allowedCommands } from "../allowed.js";
import { eventMetadata, type CommandContext } from "../context.js";
import { earlierTry as earlierTryIn, type EarlierTry } from "../outcomes.js";

/** A payment as of one revision of its stream. */
export interface Loaded {
  snapshot: PaymentSnapshot;
  /** Last revision of the stream; -1 before the first event. */
  revision: number;
  request_id: number;
  /** Hash of the stream's last event, the link of the next one (src/events/chain.ts). */
  hash: string | null;
  /**
   * The Idempotency-Keys under which processor calls were made on the payment (its attempts'
   * metadata): a command under another key is a first try, answered without reading the stream.
   */
  attemptKeys: readonly string[];
}

/** The keys with the event's, when it is an attempt made under an Idempotency-Key. */
const withAttemptKey = (keys: readonly string[], event: { type: string }, key: string | null | undefined) =>
  key && isAttempt(event) && !keys.includes(key) ? [...keys, key] : keys;

/** What a processor and a decider see of a payment: the machine's context. */
export const viewOf = (loaded: Loaded): PaymentView => loaded.snapshot.context as PaymentView;

/** How often a blocking auth looks at the store for a card presented through another process. */
const COLLECTING_LOOK_MS = 250;

export const NEW_PAYMENT: Loaded = { snapshot: initialPaymentSnapshot, revision: -1, request_id: 0, hash: null, attemptKeys: [] };

/**
 * How long a command waits for another process's processor call on the same payment to finish
 * (polling the store) before answering 409 attempt_in_flight.
 */
const IN_FLIGHT_WAIT_MS = 2_000;
/** Between two looks at the store for another process's call: 5 ms more each time, at most 100. */
const pause = (look: number) => new Promise((r) => setTimeout(r, Math.min(5 * look, 100)));

export interface PaymentStreamsOptions {
  store: EventStore;
  clock: Clock;
  ids: Ids;
  /** Payment states kept in memory between commands (least recently used leave). */
  cacheSize: number;
  /**
   * What a command answers for the payment as it will stand after an append: the answer an HTTP
   * Idempotency-Key record stores in the append's transaction (createEngine gives the presenter).
   */
  answerOf: (payment: Pick<Loaded, "snapshot" | "request_id">) => unknown;
}

export function createPaymentStreams({ store, clock, ids, cacheSize, answerOf }: PaymentStreamsOptions) {
  const cache = new Map<string, Loaded>();
  const locks = new Map<string, Promise<unknown>>();
  const waiters = new Map<string, Set<() => void>>();

  /** Serializes work on one key in this process. */
  function withLock<T>(key: string, run: () => Promise<T>): Promise<T> {
    const previous = locks.get(key) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(run);
    const tail = next.catch(() => undefined);
    locks.set(key, tail);
    void tail.then(() => locks.get(key) === tail && locks.delete(key));
    return next;
  }

  /** The store's change mark taken just before the read each cached state was folded from (or as of its append). */
  const checkedAt = new WeakMap<Loaded, number | string>();
  /** Least recently used payments leave first; `mark`: the state is current while the store's change mark is this. */
  const remember = (paymentId: string, loaded: Loaded, mark?: number | string) =>
    setBounded(cache, paymentId, mark === undefined ? loaded : (checkedAt.set(loaded, mark), loaded), cacheSize);

  /**
   * A payment's state: the cached snapshot plus whatever any process appended since. `accountId`: the
   * account asking (a history that no longer folds reads as missing to another account, as if it folded).
   */
  async function load(paymentId: string, accountId: string | null = null): Promise<Loaded | undefined> {
    const cached = cache.get(paymentId);
    // nothing appended to it since the cached state was read: it is current without a read
    const mark = store.changeMark?.(streams.payment(paymentId));
    if (cached && mark !== undefined && checkedAt.get(cached) === mark) {
      remember(paymentId, cached);
      return cached;
    }
    const events = await store.readStream(streams.payment(paymentId), { fromRevision: cached ? cached.revision + 1 : 0 });
    if (!cached && events.length === 0) return undefined;
    let loaded = cached ?? NEW_PAYMENT;
    try {
      for (const e of events) {
        const attemptKeys = withAttemptKey(loaded.attemptKeys, e, e.metadata.idempotency_key);
        loaded = { snapshot: applyStored(loaded.snapshot, e), revision: e.revision, request_id: e.metadata.request_id, hash: hashOf(e), attemptKeys };
      }
    } catch (error) {
      const owner = cached?.snapshot.context.intent?.external_account_id ?? (events[0]?.data as { external_account_id?: unknown } | undefined)?.external_account_id;
      if (accountId !== null && owner !== accountId) throw new NotFound("payment", paymentId, "payment_id");
      throw error;
    }
    remember(paymentId, loaded, mark);
    return loaded;
  }

  /** Another account's payment reads as missing. */
  async function loadOwned(accountId: string, paymentId: string): Promise<Loaded> {
    const loaded = await load(paymentId, accountId);
    if (!loaded || loaded.snapshot.context.intent?.external_account_id !== accountId) throw new NotFound("payment", paymentId, "payment_id");
    return loaded;
  }

  /**
   * What a retry under this Idempotency-Key gets from its earlier try (../outcomes.ts earlierTry),
   * read from the store as it is now (the answer as a payment, as of its last event). Only for a
   * key in the payment's attemptKeys: any other is a first try.
   */
  async function earlierTry(paymentId: string, idempotencyKey: string, byClient: boolean, since?: string): Promise<Exclude<EarlierTry, { answer: unknown }> | { answer: Loaded } | undefined> {
    const events = await store.readStream(streams.payment(paymentId));
    const earlier = earlierTryIn(events, idempotencyKey, byClient, since);
    if (!earlier || !("answer" in earlier)) return earlier;
    const { answer: snapshot, through: e } = earlier;
    const attemptKeys = events.filter((x) => x.revision <= e.revision).reduce<readonly string[]>((keys, x) => withAttemptKey(keys, x, x.metadata.idempotency_key), []);
    return { answer: { snapshot, revision: e.revision, request_id: e.metadata.request_id, hash: hashOf(e), attemptKeys } };
  }

  /**
   * What became of an attempt, read from the store after its revision: "open"; "answered" (its
   * outcome); "abandoned" (the processor did nothing, as far as was known); "answered_late" (then its
   * late answer was recorded: an event whose metadata names it as `late_answer_to`); "reused" (then a
   * retry made the same call again, the same attempt id: what the processor did is that attempt's).
   */
  async function attemptFate(paymentId: string, attempt: AttemptEvent, attemptRevision: number): Promise<"open" | "answered" | "abandoned" | "answered_late" | "reused"> {
    const events = await store.readStream(streams.payment(paymentId), { fromRevision: attemptRevision + 1 });
    const { attempt_id } = attempt.data;
    let fate: "open" | "answered" | "abandoned" = "open";
    for (const e of events) {
      if (fate === "abandoned" && e.metadata.late_answer_to === attempt_id) return "answered_late";
      if (fate === "abandoned" && isAttempt(e) && e.data.attempt_id === attempt_id) return "reused";
      if (fate === "open") fate = closesAttempt(attempt, e) ?? "open";
    }
    return fate;
  }

  const notify = (paymentId: string) => waiters.get(paymentId)?.forEach((wake) => wake());

  /** Asks the machine; appends only what it allows, with the revision the decision was made on. */
  async function append(paymentId: string, loaded: Loaded, events: PaymentEvent[], ctx: CommandContext, command: string): Promise<Loaded> {
    let snapshot = loaded.snapshot;
    for (const event of events) {
      const next = applyPaymentEvent(snapshot, PaymentEvent.parse(event));
      if (!next) throw new TransitionNotAllowed(paymentId, command, String(snapshot.value), allowedCommands(snapshot), `${event.type} not allowed`);
      snapshot = next;
    }
    const stream = streams.payment(paymentId);
    const data = newEvents(stream, loaded.hash, events, eventMetadata(ctx, clock, ids), () => ids.uuid());
    const expectedRevision = loaded.revision < 0 ? "no_stream" : loaded.revision;
    const idempotency = ctx.idempotency?.(answerOf({ snapshot, request_id: data[0]!.metadata.request_id }));
    const { nextRevision, mark } = await store.append(stream, data, { expectedRevision, idempotency });
    const attemptKeys = events.reduce((keys, e) => withAttemptKey(keys, e, ctx.idempotency_key), loaded.attemptKeys);
    const after: Loaded = { snapshot, revision: nextRevision, request_id: data[0]!.metadata.request_id, hash: hashOf(data[data.length - 1]!), attemptKeys };
    remember(paymentId, after, mark);
    notify(paymentId);
    return after;
  }

  /**
   * Runs a command on one payment. The decision starts from this process's cached state without
   * reading the store: if another process appended meanwhile, the expected-revision check refuses
   * the append and the command re-decides on fresh state; a refusal decided on cached state is
   * re-checked on fresh state before it is answered. So a command costs one store round trip
   * (its append) when this process is the only writer, and is never answered from stale state.
   * accountId null: the caller proved access another way (a processor, a client secret).
   */
  function onPayment(accountId: string | null, paymentId: string, decide: (loaded: Loaded) => Promise<Loaded>): Promise<Loaded> {
    return withLock(paymentId, async () => {
      const waitUntil = Date.now() + IN_FLIGHT_WAIT_MS;
      let conflicts = 0;
      for (let attempt = 1; ; attempt++) {
        const cached = attempt === 1 ? cache.get(paymentId) : undefined;
        try {
          const loaded = cached ?? (await load(paymentId, accountId));
          if (!loaded || (accountId !== null && loaded.snapshot.context.intent?.external_account_id !== accountId)) {
            throw new NotFound("payment", paymentId, "payment_id");
          }
          return await decide(loaded);
        } catch (error) {
          // a refusal decided on cached state, before this command appended anything, is re-checked
          // (not a processor that did not answer a call recording nothing: asked again, it would be waited for twice)
          const appended = cache.get(paymentId) !== undefined && cache.get(paymentId) !== cached;
          const refusal = error instanceof CardflowError && !(error instanceof ProcessorUnavailable);
          const stale = error instanceof WrongExpectedRevision || (cached !== undefined && !appended && refusal);
          // another process's processor call in flight: wait for its outcome (a lock, as across processes)
          const inFlight = error instanceof Conflict && error.code === "attempt_in_flight" && Date.now() < waitUntil;
          if (!stale && !inFlight) throw error;
          // the next try loads: the cached state plus what was appended since (a stream only grows)
          if (inFlight) await pause(attempt);
          else if (++conflicts >= 5) throw new Conflict(`payment ${paymentId} is changing concurrently; retry`, "concurrent_update");
        }
      }
    });
  }

  /**
   * The payment once its attempt `attemptId` (another process's call, in flight) is closed, looked
   * at in the store for up to IN_FLIGHT_WAIT_MS; as it then stands if that call is still open.
   */
  async function afterAttempt(paymentId: string, attemptId: string): Promise<Loaded> {
    const waitUntil = Date.now() + IN_FLIGHT_WAIT_MS;
    for (let look = 1; ; look++) {
      const loaded = (await load(paymentId))!;
      if (loaded.snapshot.context.attempt?.data.attempt_id !== attemptId || Date.now() >= waitUntil) return loaded;
      await pause(look);
    }
  }

  /** A new payment: its first append, under its lock. */
  const create = (paymentId: string, events: PaymentEvent[], ctx: CommandContext) =>
    withLock(paymentId, () => append(paymentId, NEW_PAYMENT, events, ctx, "create"));

  /**
   * Resolves when the terminal has finished collecting and its follow-ups ran (false: deadline).
   * The card may be presented through another process, which then runs the follow-ups: so the
   * store is also looked at every COLLECTING_LOOK_MS, and `finished` says whether a state read
   * there is final (`quiet`: the stream has not moved since the previous look).
   */
  function waitWhileCollecting(paymentId: string, timeoutMs: number, finished: (loaded: Loaded, quiet: boolean) => boolean): Promise<boolean> {
    if (endedWith) return Promise.reject(endedWith);
    return new Promise((resolve, reject) => {
      const set = waiters.get(paymentId) ?? new Set();
      waiters.set(paymentId, set);
      let over = false;
      let cancelLook = () => {};
      const done = (collected: boolean | Error) => {
        if (over) return;
        over = true;
        set.delete(check);
        if (set.size === 0) waiters.delete(paymentId);
        ended.delete(done);
        cancelTimer();
        cancelLook();
        if (collected instanceof Error) reject(collected);
        else resolve(collected);
      };
      ended.add(done);
      const check = () => {
        const current = cache.get(paymentId);
        if (!current || hasTag(current.snapshot, "collecting_card")) return;
        if (locks.has(paymentId)) void locks.get(paymentId)!.then(check);
        else done(true);
      };
      let lastRevision: number | undefined;
      const look = () => {
        cancelLook = clock.setTimer(COLLECTING_LOOK_MS, () => {
          void load(paymentId)
            .then((current) => {
              if (over || !current || locks.has(paymentId) || hasTag(current.snapshot, "collecting_card")) return;
              const quiet = current.revision === lastRevision;
              lastRevision = current.revision;
              if (finished(current, quiet)) done(true);
            })
            .catch(() => undefined) // the store unreachable for a moment: look again
            .finally(() => over || look());
        });
      };
      const cancelTimer = clock.setTimer(timeoutMs, () => done(false));
      set.add(check);
      check();
      look();
    });
  }

  /** The waits of blocking authorizations, each ended with the error given (the engine closing), and any begun later. */
  const ended = new Set<(error: Error) => void>();
  let endedWith: Error | undefined;
  const endWaits = (error: Error) => ((endedWith = error), ended.forEach((end) => end(error)));

  /** When the payment's last terminal collection began (its TerminalAuthorizationStarted; null: none), as the reconciler dates it. */
  async function collectingSince(paymentId: string): Promise<number | null> {
    const events = await store.readStream(streams.payment(paymentId));
    const started = [...events].reverse().find((e) => e.type === "TerminalAuthorizationStarted");
    return started ? Date.parse(started.metadata.timestamp) : null;
  }

  return { load, loadOwned, append, onPayment, create, waitWhileCollecting, collectingSince, endWaits, earlierTry, attemptFate, afterAttempt };
}

export type PaymentStreams = ReturnType<typeof createPaymentStreams>;
