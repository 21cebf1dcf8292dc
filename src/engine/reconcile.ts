// The reconciler: closes what a crash left open. An attempt without an outcome older than the
// grace period is looked up at the processor (ProcessorPort.lookup): its recorded answer becomes
// the outcome events, or AttemptAbandoned when the call never reached the processor (the command
// may then be tried again). A payment left waiting for a processor A terminal past the blocking
// auth's deadline (a restart lost the waiting request and the simulated terminal) gets the
// terminal's real outcome, or USER_TIMEOUT. Each resolution is appended with the revision it was
// decided on, so with several processes reconciling, the first append wins and the others find
// the attempt closed. Only the call that is due is resolved: when another process closed it and a
// new call is open by the time the payment is loaded, that one is left to a later pass (asked now,
// a call still in flight would be "never received" and abandoned while the processor acts on it).
//
// A call found never received may still land: slower than the grace, or asked about while it was on
// its way. Its own command records the processor's late answer when it does (./handlers/pipeline.ts
// recordLateAnswer); in case that process died first, the reconciler looks each such call up once
// more, a grace after it abandoned it, and records what the processor did after all.
//
// Open attempts are found by an index folded from the store's global log: an attempt event opens
// one; any later event of that payment closes it (the machine allows nothing else while one is in
// flight). The index is kept in memory and caught up from where it stopped on every pass.
import { ATTEMPT_TYPES, type AttemptEvent, type AttemptType, type TerminalType } from "../../machines/events.js";
import { setBounded } from "../bounded.js";
import type { Clock } from "../clock.js";
import type { Processors } from "../processors/port.js";
import { WrongExpectedRevision, type AllReader, type RecordedEvent } from "../store/port.js";
import { commandClock, type CommandContext } from "./context.js";
import { openKey, resolveOpen } from "./deciders/resolve-open.js";
import { accepts, lateAnswerEvents, NEVER_RECEIVED, processorActed } from "./outcomes.js";
import type { Pipeline } from "./handlers/pipeline.js";
import { lookupAnswer } from "./handlers/processor-calls.js";
import { LateAnswerWaits, UnappliedLateAnswer } from "./streams/late-answers.js";
import { viewOf } from "./streams/payment-streams.js";

/** A second look that cannot be decided yet (another call on the payment is in flight). */
const WAITS = Symbol("waits");

export interface ReconcileOptions {
  /** Report what would be appended, append nothing. */
  dryRun?: boolean;
  /** Override the engine's grace period for this pass (0: every open attempt). */
  graceMs?: number;
}

export interface Resolution {
  payment_id: string;
  /** The open attempt's type, or "TerminalWait" for a terminal collection past its deadline. */
  open: AttemptType | "TerminalWait";
  attempt_id: string | null;
  /** What the processor said: its recorded call, "never_received", or "still_collecting". */
  processor: string;
  /** The events appended (or that would be, in a dry run); empty when another process closed it first. */
  appended: string[];
  /** A second look at a call abandoned as never received: what the processor did after all (its late answer). */
  late?: true;
  /** Its late answer the payment no longer takes: recorded beside it for an operator (LateAnswerUnapplied). */
  unapplied?: true;
}

/** An open call this pass could not resolve: left open, tried again next pass. */
export interface ReconcileFailure {
  payment_id: string;
  open: AttemptType | "TerminalWait";
  attempt_id: string | null;
  /** Why (the processor's lookup failed or answered what no outcome is, the store away...). */
  error: string;
}

export interface ReconcileReport {
  /** Open attempts and terminal waits older than their deadline, found in this pass. */
  found: number;
  resolved: Resolution[];
  /** The calls it could not resolve this pass (each on its own: the others are resolved all the same). */
  failed: ReconcileFailure[];
  /** Still open but younger than the grace period. */
  waiting: number;
  /** Age of the oldest attempt or terminal wait still open after the pass (0 when none): the backlog's age. */
  oldest_open_ms: number;
  dry_run: boolean;
  duration_ms: number;
}

interface Open {
  payment_id: string;
  kind: AttemptType | "TerminalWait";
  since: number;
  /** The event that opened it: its revision and the call's key (the attempt id). */
  revision: number;
  key: string | null;
  /** The attempt event (none for a terminal wait). */
  attempt?: AttemptEvent;
  /** A processor A terminal's collection (its wait, or the attempt that starts it): its type. */
  terminalType?: TerminalType;
}

/** A call abandoned as never received, to be looked up once more (`since`: its abandonment). */
interface SecondLook {
  payment_id: string;
  attempt: AttemptEvent;
  revision: number;
  since: number;
}

/** Calls abandoned longer ago than this when the index reads them get no second look (a restart on an old store). */
const SECOND_LOOK_WINDOW_MS = 24 * 60 * 60 * 1000;
/** At most this many second looks wait at once (the most recent abandonments): a long outage stays flat in memory. */
const SECOND_LOOKS_KEPT = 10_000;

const ATTEMPTS = new Set<string>(ATTEMPT_TYPES);
/**
 * How long an asynchronous terminal's collection stays open before the reconciler ends it
 * (USER_TIMEOUT, the terminal told to stop) when the terminal never said how it ended: spec §8's
 * client give-up time, at least 3 minutes of polling (the terminal gives up on its shopper sooner,
 * and says so). A synchronous terminal's is the blocking auth's deadline (SYNC_AUTH_TIMEOUT_MS).
 */
export const ASYNC_COLLECTION_MS = 180_000;
/**
 * Events read per batch while indexing the open attempts: a pass after a few busy seconds reads
 * thousands, and 5,000 at once held the event loop for about 40 ms on SQLite (a mixed-load profile).
 */
export const CATCH_UP_BATCH = 500;

interface Deps {
  store: AllReader;
  pipeline: Pipeline;
  processors: Processors;
  clock: Clock;
  /** A terminal collection older than this is over (the blocking auth's deadline). */
  syncAuthTimeoutMs: number;
  /** How old an open attempt must be before the processor is asked (the default of a pass). */
  reconcileGraceMs: number;
}

export function createReconciler({ store, pipeline, processors, clock, syncAuthTimeoutMs, reconcileGraceMs }: Deps) {
  const open = new Map<string, Open>();
  /** How long a terminal's collection may last: the blocking auth's deadline, an asynchronous terminal's own. */
  const collectionMs = (o: Open) => (o.terminalType === "A_async" ? ASYNC_COLLECTION_MS : syncAuthTimeoutMs);
  const secondLooks = new Map<string, SecondLook>();
  let position = 0;

  function index(e: RecordedEvent) {
    // its late answer recorded (on the payment, or beside it when the payment no longer took it): no second look
    if (typeof e.metadata.late_answer_to === "string") secondLooks.delete(e.metadata.late_answer_to);
    if (!e.stream.startsWith("payment-")) return;
    const payment_id = e.stream.slice("payment-".length);
    const was = open.get(payment_id);
    open.delete(payment_id);
    const since = Date.parse(e.metadata.timestamp);
    if (was?.attempt && e.type === "AttemptAbandoned" && (e.data as { reason: string }).reason === NEVER_RECEIVED && clock.now() - since < SECOND_LOOK_WINDOW_MS) {
      setBounded(secondLooks, was.attempt.data.attempt_id, { payment_id, attempt: was.attempt, revision: was.revision, since }, SECOND_LOOKS_KEPT);
    }
    const { attempt_id, terminal_type } = e.data as { attempt_id?: string; terminal_type?: TerminalType };
    const opened = { payment_id, since, revision: e.revision, key: attempt_id ?? null, ...(terminal_type && { terminalType: terminal_type }) };
    if (ATTEMPTS.has(e.type)) open.set(payment_id, { ...opened, kind: e.type as AttemptType, attempt: { type: e.type, data: e.data } as AttemptEvent });
    // the machine takes TerminalAuthorizationStarted only for a processor A terminal (isProcessorATerminal)
    else if (e.type === "TerminalAuthorizationStarted") open.set(payment_id, { ...opened, kind: "TerminalWait" });
  }

  /** Stores make positions visible in order, without gaps that fill later (src/store/port.ts). */
  async function catchUp() {
    for (;;) {
      const batch = await store.readAll({ after: position, maxCount: CATCH_UP_BATCH });
      for (const e of batch) index(e);
      if (batch.length > 0) position = batch[batch.length - 1]!.position;
      if (batch.length < CATCH_UP_BATCH) return; // short: the store's end
      // a synchronous store (SQLite) holds the event loop for a whole read: one batch per turn
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  async function resolve(item: Open, dryRun: boolean, now: number): Promise<Resolution | null> {
    let resolution: Resolution | null = null;
    const ctx: CommandContext = commandClock(clock, { actor: "reconciler" });
    await pipeline.onPayment(null, item.payment_id, async (loaded) => {
      resolution = null;
      // a state from before the due call was opened (this process's cache of a payment another process
      // went on with: it would show nothing open, and the call would never be resolved): read it again
      if (loaded.revision < item.revision) throw new WrongExpectedRevision(`payment-${item.payment_id}`, loaded.revision, item.revision);
      // gather what the processor recorded for the open call, then decide (pure)
      const key = openKey(loaded.snapshot);
      if (key === null) return loaded; // closed meanwhile (by its command or another process)
      // the due call was closed and another opened since (its call may be in flight): not due yet
      if (key !== undefined && item.key !== null && key !== item.key) return loaded;
      // the same id open again past the due call: a retry made the call again since (not due yet)
      if (item.attempt && loaded.revision > item.revision && (await pipeline.attemptFate(item.payment_id, item.attempt, item.revision)) === "reused") return loaded;
      const recorded = key ? await lookupAnswer(processors, viewOf(loaded), key) : "never_received";
      const decided = resolveOpen(loaded.snapshot, recorded, now - item.since >= collectionMs(item));
      if (!decided) return loaded;
      const { events, stopTerminal, unfit, ...open } = decided;
      // an answer the payment does not take, when the processor acted: kept beside it, for an operator (a dry run says so too)
      const kept = unfit !== undefined && processorActed(unfit);
      resolution = { payment_id: item.payment_id, ...open, appended: [...events.map((e) => e.type), ...(kept ? ["LateAnswerUnapplied"] : [])], ...(kept && { unapplied: true }) };
      if (dryRun) return loaded;
      const attempt = loaded.snapshot.context.attempt;
      const after = await pipeline.carryOut(loaded, { append: events, ...(stopTerminal === undefined ? {} : { stopTerminal }) }, ctx, "reconcile", { followUps: true });
      if (kept && attempt) await pipeline.keepUnfitAnswer(item.payment_id, attempt, unfit, "the payment does not take it", ctx);
      return after;
    });
    return resolution;
  }

  /**
   * A call abandoned as never received, looked up once more: its late answer recorded if the
   * processor acted after all (for an operator, beside the payment, when the payment no longer
   * takes it). WAITS while another call on the payment is in flight: looked at again next pass.
   */
  async function lookAgain(item: SecondLook, dryRun: boolean): Promise<Resolution | null | typeof WAITS> {
    const { attempt, payment_id } = item;
    const attempt_id = attempt.data.attempt_id;
    let resolution: Resolution | null = null;
    const ctx: CommandContext = commandClock(clock, { actor: "reconciler" });
    try {
      await pipeline.onPayment(null, payment_id, async (loaded) => {
        resolution = null;
        // its command recorded it, or a retry made the call again (that attempt's outcome records what the processor did)
        if ((await pipeline.attemptFate(payment_id, attempt, item.revision)) !== "abandoned") return loaded;
        const recorded = await lookupAnswer(processors, viewOf(loaded), attempt_id);
        // as it was (never received, or refused without acting): nothing to record, nothing to report
        if (recorded === "never_received" || recorded.call === "refused") return loaded;
        const events = lateAnswerEvents(viewOf(loaded), attempt, recorded);
        resolution = { payment_id, open: attempt.type, attempt_id, processor: recorded.call, appended: events.map((e) => e.type), late: true };
        if (dryRun) {
          // what a pass would append: the late answer, or, when the payment no longer takes it, its record for an operator
          if (events.length > 0 && !accepts(loaded.snapshot, events)) {
            if (loaded.snapshot.context.attempt) throw new LateAnswerWaits(payment_id, attempt_id, loaded.snapshot.context.attempt.data.attempt_id);
            resolution = { ...(resolution as Resolution), appended: ["LateAnswerUnapplied"], unapplied: true };
          }
          return loaded;
        }
        return pipeline.recordLateAnswer(payment_id, attempt, item.revision, recorded, ctx, "reconcile");
      });
    } catch (error) {
      if (error instanceof LateAnswerWaits) return WAITS;
      if (!(error instanceof UnappliedLateAnswer) || resolution === null) throw error;
      return { ...(resolution as Resolution), appended: ["LateAnswerUnapplied"], unapplied: true };
    }
    return resolution;
  }

  /** One pass: catch the index up, resolve every open attempt older than the grace period. */
  async function reconcile(options: ReconcileOptions = {}): Promise<ReconcileReport> {
    const started = performance.now();
    const dryRun = options.dryRun ?? false;
    const graceMs = options.graceMs ?? reconcileGraceMs;
    await catchUp();
    const now = clock.now();
    const due = [...open.values()].filter((o) => now - o.since >= (o.kind === "TerminalWait" ? Math.max(graceMs, collectionMs(o)) : graceMs));
    const resolved: Resolution[] = [];
    const failed: ReconcileFailure[] = [];
    let failedDue = 0;
    // one call that cannot be resolved (its processor's lookup failing) holds up no other
    const failure = (payment_id: string, open: ReconcileFailure["open"], attempt_id: string | null, error: unknown): ReconcileFailure => ({ payment_id, open, attempt_id, error: error instanceof Error ? error.message : String(error) });
    for (const item of due) {
      let r: Resolution | null;
      try {
        r = await resolve(item, dryRun, now);
      } catch (error) {
        failed.push(failure(item.payment_id, item.kind, item.attempt?.data.attempt_id ?? null, error));
        failedDue++;
        continue; // still open: tried again next pass (not among the younger ones waiting)
      }
      if (r) resolved.push(r);
      // what it appended closes it when indexed (an abandonment then gets its second look)
      if (!dryRun && !r?.appended.length) open.delete(item.payment_id);
    }
    for (const item of [...secondLooks.values()].filter((l) => now - l.since >= graceMs)) {
      // one look, kept while another call is in flight, or while the look fails (its processor's
      // lookup away: a late answer it would find is money on no record), named in each pass's failed
      if (!dryRun) secondLooks.delete(item.attempt.data.attempt_id);
      let r: Awaited<ReturnType<typeof lookAgain>>;
      try {
        r = await lookAgain(item, dryRun);
      } catch (error) {
        failed.push(failure(item.payment_id, item.attempt.type, item.attempt.data.attempt_id, error));
        if (!dryRun) secondLooks.set(item.attempt.data.attempt_id, item);
        continue;
      }
      if (r === WAITS) {
        if (!dryRun) secondLooks.set(item.attempt.data.attempt_id, item);
      } else if (r) resolved.push(r);
    }
    if (!dryRun) await catchUp();
    // a dry run leaves the due ones open: they are not the younger ones still waiting
    return { found: due.length, resolved, failed, waiting: open.size - (dryRun ? due.length : failedDue), oldest_open_ms: [...open.values()].reduce((age, o) => Math.max(age, now - o.since), 0), dry_run: dryRun, duration_ms: Math.round(performance.now() - started) };
  }

  return { reconcile };
}

export type Reconciler = ReturnType<typeof createReconciler>;
