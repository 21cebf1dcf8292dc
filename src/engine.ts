// The engine as a library: createEngine composes the command handlers (src/engine/handlers/*: the
// one pipeline validate → load → decide → attempt → call → outcome, each command's rule a pure
// decider in src/engine/deciders/) over small explicit dependencies, and presents their answers
// with the presenter every surface uses (src/present/). Commands on one payment are serialized in
// this process; across processes the store's optimistic concurrency decides and the loser
// re-decides on fresh state. The reconciler (src/engine/reconcile.ts) closes what a crash left open.
import { stateOf } from "../machines/fold.js";
import { PROJECTIONS, RETIRED_PROJECTIONS } from "../projections/registry.js";
import { createProjectionRunner } from "../projections/runner.js";
import { systemClock, type Clock } from "./clock.js";
import { EngineClosed } from "./errors.js";
import { allowedCommands } from "./engine/allowed.js";
import { accountHandlers } from "./engine/handlers/accounts.js";
import { authorizeHandler } from "./engine/handlers/authorize.js";
import { collectPaymentMethodHandler } from "./engine/handlers/collect-payment-method.js";
import { createIntentHandler } from "./engine/handlers/create-intent.js";
import { cancelHandler, captureHandler, processPaymentHandler, refundHandler, reportHandler } from "./engine/handlers/payment-commands.js";
import { createPipeline, type AttemptFault } from "./engine/handlers/pipeline.js";
import { saveCardHandler } from "./engine/handlers/save-card.js";
import { createAccountLookups } from "./engine/lookups/accounts.js";
import { createStoredCards } from "./engine/lookups/stored-cards.js";
import { createReconciler, type ReconcileOptions, type ReconcileReport } from "./engine/reconcile.js";
import type { CommandContext } from "./engine/context.js";
import { createLateAnswers } from "./engine/streams/late-answers.js";
import { createPaymentStreams, type Loaded } from "./engine/streams/payment-streams.js";
import { createSingleEventStreams } from "./engine/streams/single-event-streams.js";
import { randomIds, type Ids } from "./ids.js";
import { GetPaymentInput, parseInput, type CreateIntentRequest, type GetPaymentRequest, type SettleLateAnswerRequest } from "./inputs.js";
import { checkOptions } from "./options.js";
import { recordOf, type CreatedIntent, type PaymentRecord } from "./present/payment-record.js";
import { portsProblem, type Processors } from "./processors/port.js";
import { createSimulators } from "./processors/simulator.js";
import { createMemoryReadModels, createMemoryStore } from "./store/memory/index.js";
import type { EventStore, ReadModelStore } from "./store/port.js";

export type { CommandContext } from "./engine/context.js";
export { CLIENT_SECRET_ACTOR } from "./engine/context.js";
export type { Account } from "./engine/lookups/accounts.js";
export type { AttemptFault } from "./engine/handlers/pipeline.js";
export type { CreatedIntent } from "./present/payment-record.js";
export type { ReconcileOptions, ReconcileReport, Resolution } from "./engine/reconcile.js";
export { LateAnswerWaits, UnappliedLateAnswer } from "./engine/streams/late-answers.js";

export interface EngineOptions {
  store?: EventStore;
  readModels?: ReadModelStore;
  processors?: Processors;
  clock?: Clock;
  ids?: Ids;
  /** How long a synchronous-terminal auth blocks before the engine gives up (spec §8: 120 s). */
  syncAuthTimeoutMs?: number;
  /** Payment states kept in memory between commands (bounded: least recently used leave). */
  cacheSize?: number;
  /** Keep read models updated by a subscription (otherwise they catch up when read). */
  liveProjections?: boolean;
  /**
   * How old an attempt without outcome must be before the reconciler asks the processor (default
   * 30 s). Keep it above the processor calls' timeout: a call still under way must not be taken
   * for one that never arrived.
   */
  reconcileGraceMs?: number;
  /** Crash tests: called at each point of every attempt; a throw there stands for a crash. */
  fault?: AttemptFault;
}

/** The payment record of a payment as of its last event (spec §2.1). */
const answerOf = ({ snapshot, request_id }: Pick<Loaded, "snapshot" | "request_id">): PaymentRecord => recordOf({ state: stateOf(snapshot), request_id });

/** Every option's name, once (a name missing or extra here does not compile). */
const ENGINE_OPTIONS = { store: 1, readModels: 1, processors: 1, clock: 1, ids: 1, syncAuthTimeoutMs: 1, cacheSize: 1, liveProjections: 1, reconcileGraceMs: 1, fault: 1 } satisfies Record<keyof EngineOptions, 1>;

export function createEngine(options: EngineOptions = {}) {
  checkOptions("createEngine", options, Object.keys(ENGINE_OPTIONS), {
    processors: "createSimulators() returns the processors themselves: createEngine({ processors: sims })",
    // createSqliteStore() and the like answer { events, readModels }: spread, the events would be dropped for a memory store
    events: "a store's events go in as store: const { events, readModels } = createSqliteStore(...); createEngine({ store: events, readModels })",
  });
  const clock = options.clock ?? systemClock;
  const ids = options.ids ?? randomIds();
  const store = options.store ?? createMemoryStore();
  const readModels = options.readModels ?? createMemoryReadModels();
  // null is not "the default": an embedding whose adapters came out null would take simulated money
  if (options.processors === null) throw new TypeError("createEngine: option processors is null; omit it for the simulators, or pass your processors");
  // the simulators the engine made are its own to stop when it closes
  const ownSimulators = options.processors === undefined ? createSimulators({ clock, ids }) : null;
  const processors = options.processors ?? ownSimulators!;
  // a wiring mistake said at once, not later as a processor that "did not answer"
  if (typeof processors.get !== "function" || typeof processors.connect !== "function") {
    throw new TypeError("createEngine: option processors must be { get(processor), connect(report) } (Processors, src/processors/port.ts); adapters by processor name ({ A, B }, as a PROCESSORS_MODULE's createProcessors returns them) are passed as processorsFromAdapters(adapters)");
  }
  const portsWrong = portsProblem((p) => processors.get(p));
  if (portsWrong) throw new TypeError(`createEngine: option processors: ${portsWrong}`);
  const cacheSize = options.cacheSize ?? 10_000;
  const syncAuthTimeoutMs = options.syncAuthTimeoutMs ?? 120_000;
  const projections = createProjectionRunner({ store, readModels, projections: PROJECTIONS, retired: RETIRED_PROJECTIONS });
  const payments = createPaymentStreams({ store, clock, ids, cacheSize, answerOf });
  const streamsOfOne = createSingleEventStreams({ store, clock, ids, cacheSize });
  const accounts = createAccountLookups(streamsOfOne);
  const storedCards = createStoredCards({ payments, readModels, projections, processors, cacheSize });
  const lateAnswers = createLateAnswers({ store, clock, ids });
  const reconcileGraceMs = options.reconcileGraceMs ?? 30_000;
  const pipeline = createPipeline({ payments, lateAnswers, processors, clock, ids, reconcileGraceMs, ...(options.fault ? { fault: options.fault } : {}) });
  const reconciler = createReconciler({ store, pipeline, processors, clock, syncAuthTimeoutMs, reconcileGraceMs });
  if (options.liveProjections) projections.start();
  const report = reportHandler({ pipeline, clock });
  // a report after close() is refused like every call
  processors.connect((paymentId, reported) => guarded.report(paymentId, reported));
  let stopReconciling: (() => Promise<void>) | null = null;
  let closing: Promise<void> | null = null;

  // A Loaded never changes, so neither does its record: presented once per state (status reads of
  // an unchanged payment, a command's answer), frozen since every caller gets the same object.
  const records = new WeakMap<Loaded, PaymentRecord>();
  function present(loaded: Loaded): PaymentRecord {
    let record = records.get(loaded);
    if (!record) {
      record = answerOf(loaded);
      if (record.payment) Object.freeze(record.payment);
      records.set(loaded, Object.freeze(record));
    }
    return record;
  }
  /** A command on a payment, its answer presented. */
  const presented = <A extends unknown[]>(handler: (...args: A) => Promise<Loaded>) => async (...args: A) => present(await handler(...args));

  const accountCommands = accountHandlers({ streamsOfOne, accounts, projections, clock, ids });
  const createIntent = createIntentHandler({ pipeline, accounts, storedCards, clock, ids });

  const calls = {

    ...accountCommands,
    getAccount: accounts.getAccount,
    /** The account's terminal, from its own stream (no read model, no wait); another account's reads as missing. */
    getTerminal: accounts.getTerminal,
    /** Streams whose one event never changes (accounts, terminals, API keys): start one, read its event. */
    startStream: streamsOfOne.startStream,
    firstEvent: streamsOfOne.firstEvent,

    async createIntent(input: CreateIntentRequest, ctx?: Parameters<typeof createIntent>[1]): Promise<CreatedIntent> {
      const { payment, client_secret } = await createIntent(input, ctx);
      return { ...present(payment), client_secret };
    },
    async getPayment(input: GetPaymentRequest): Promise<PaymentRecord> {
      const { external_account_id, payment_id } = parseInput(GetPaymentInput, input);
      return present(await payments.loadOwned(external_account_id, payment_id));
    },
    authorize: presented(authorizeHandler({ pipeline, payments, accounts, clock, syncAuthTimeoutMs })),
    collectPaymentMethod: presented(collectPaymentMethodHandler({ pipeline, accounts, processors, clock })),
    processPayment: presented(processPaymentHandler({ pipeline, clock })),
    capture: presented(captureHandler({ pipeline, clock })),
    cancel: presented(cancelHandler({ pipeline, clock })),
    refund: presented(refundHandler({ pipeline, clock })),
    saveCard: saveCardHandler({ pipeline, store, clock, storedCards }),

    /** The commands the machine allows a payment now (for error messages and tooling). */
    async allowedNextSteps(accountId: string, paymentId: string): Promise<string[]> {
      parseInput(GetPaymentInput, { external_account_id: accountId, payment_id: paymentId });
      return allowedCommands((await payments.loadOwned(accountId, paymentId)).snapshot);
    },

    /** Processors report through this (the simulators' connect() receives it too). */
    report,

    /** One reconciler pass: resolves attempts left without outcome (see src/engine/reconcile.ts). */
    reconcile: (reconcileOptions?: ReconcileOptions): Promise<ReconcileReport> => reconciler.reconcile(reconcileOptions),
    /**
     * An operator settled a late answer the payment no longer took (LateAnswerUnapplied) with the
     * processor: recorded once (LateAnswerSettled, `note` saying what was done); the audit no
     * longer reports it. NotFound when the payment has no such late answer for the attempt.
     */
    settleLateAnswer: (input: SettleLateAnswerRequest, ctx: CommandContext = {}): Promise<void> => lateAnswers.settle(input, ctx),

    /**
     * Reconciles now and then every intervalMs (a server's background duty); onPass sees each report.
     * `beforePass`: awaited before each pass; a pass it rejects is not run (onPass sees its error).
     */
    startReconciler(intervalMs: number, onPass: (report: ReconcileReport | Error) => void = () => undefined, beforePass: () => Promise<void> = async () => undefined): void {
      if (stopReconciling) return;
      // passes never overlap: the next waits for the one before
      let running = Promise.resolve();
      const pass = () => void (running = running.then(() => beforePass().then(() => reconciler.reconcile()).then(onPass, onPass)));
      pass();
      const timer = setInterval(pass, intervalMs);
      timer.unref();
      // stopping waits for the pass under way: the store must not close beneath it
      stopReconciling = () => (clearInterval(timer), running);
    },
  };

  const { guarded, settled } = refusedOnceClosed(calls, () => closing !== null);
  return {
    store,
    readModels,
    projections,
    clock,
    ids,
    ...guarded,
    /**
     * Ends the engine: its calls refused from now on (EngineClosed), the calls under way ended first
     * (waited for until `by`, epoch ms: a served process's deadline; past it, what they left open is
     * the reconciler's), a second close() waits for the first. `step` hears each part as it begins
     * (a stop that hangs can say where).
     */
    close(step: (part: string) => void = () => undefined, by = Infinity): Promise<void> {
      return (closing ??= stop(step, by));
    },
  };

  async function stop(step: (part: string) => void, by: number): Promise<void> {
    // a blocking authorization waiting for its shopper is not waited for (up to SYNC_AUTH_TIMEOUT_MS): its terminal's outcome is the reconciler's
    payments.endWaits(new EngineClosed("a blocking authorization waiting for its shopper was ended unanswered"));
    // a call under way ends first: a processor call it made has its outcome recorded, and its caller
    // the answer (cut beneath it, the store closed, it would say nothing of the money it moved)
    step("the calls under way");
    await settled(by);
    ownSimulators?.stop();
    step("the reconciler's pass under way");
    await stopReconciling?.();
    step("the projections' catch-up under way");
    await projections.stop();
    step("closing the event store");
    await store.close();
    step("closing the read models");
    await readModels.close();
  }
}

/**
 * The engine's calls, each refused with EngineClosed once close() has begun: a call after it is not
 * run (it met a closed store's driver errors before). startReconciler, the one call that answers at
 * once, throws; the others reject. `settled(by)`: once every call begun before it has ended, or at `by` (epoch ms).
 */
function refusedOnceClosed<T extends Record<string, (...args: never[]) => unknown>>(calls: T, closed: () => boolean): { guarded: T; settled: (by: number) => Promise<void> } {
  const underWay = new Set<Promise<unknown>>();
  const guarded: Record<string, (...args: never[]) => unknown> = {};
  for (const [name, call] of Object.entries(calls)) {
    guarded[name] = (...args) => {
      if (!closed()) {
        const result = call(...args);
        if (result instanceof Promise) {
          underWay.add(result);
          const ended = () => void underWay.delete(result);
          result.then(ended, ended);
        }
        return result;
      }
      const refusal = new EngineClosed(`engine.${name}() was called after engine.close()`, "nothing was run: call it on an engine that runs");
      if (name === "startReconciler") throw refusal;
      return Promise.reject(refusal);
    };
  }
  const settled = async (by: number) => {
    let timer: NodeJS.Timeout | undefined;
    const bound = by === Infinity ? [] : [new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, by - Date.now()))))];
    await Promise.race([Promise.allSettled([...underWay]), ...bound]);
    clearTimeout(timer);
  };
  return { guarded: guarded as T, settled };
}

export type Engine = ReturnType<typeof createEngine>;
