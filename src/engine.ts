// The engine: createEngine composes the commands (src/engine/commands/*, one module each, every
// one reading decide -> attempt -> call -> outcome with the pattern of src/engine/attempt.ts) over
// one core of ports and payment streams (src/engine/core.ts). Commands on one payment are
// serialized in this process; across processes the store's optimistic concurrency decides and
// the loser re-decides on fresh state. The reconciler (src/engine/reconcile.ts) closes what a
// crash left open.
import { allowedCommands } from "./engine/allowed.js";
import { listTerminals, openAccount, registerTerminal } from "./engine/commands/accounts.js";
import { authorize } from "./engine/commands/authorize.js";
import { cancel } from "./engine/commands/cancel.js";
import { capture } from "./engine/commands/capture.js";
import { collectPaymentMethod } from "./engine/commands/collect-payment-method.js";
import { createIntent } from "./engine/commands/create-intent.js";
import { processPayment } from "./engine/commands/process-payment.js";
import { refund } from "./engine/commands/refund.js";
import { report } from "./engine/commands/report.js";
import { listCustomerCards, saveCard } from "./engine/commands/save-card.js";
import { createCore, type EngineOptions } from "./engine/core.js";
import { createReconciler, type ReconcileOptions, type ReconcileReport } from "./engine/reconcile.js";
import { GetPaymentInput, parseInput } from "./inputs.js";
import { refuseUndefinedOptions } from "./options.js";
import type { PaymentRecord } from "./present/payment-record.js";

export type { Account, CommandContext } from "./engine/payment-streams.js";
export type { CreatedIntent } from "./present/payment-record.js";
export type { ReconcileOptions, ReconcileReport, Resolution } from "./engine/reconcile.js";
export type { EngineOptions } from "./engine/core.js";

export function createEngine(options: EngineOptions = {}) {
  refuseUndefinedOptions("createEngine", options, { processors: "createSimulators() returns the processors themselves: createEngine({ processors: sims })" });
  const core = createCore(options);
  const { store, readModels, projections, clock, ids, payments } = core;
  if (options.liveProjections) projections.start();
  const onReport = report(core);
  core.processors.connect(onReport);
  const reconciler = createReconciler(core);
  let stopReconciling: (() => Promise<void>) | null = null;

  return {
    store,
    readModels,
    projections,
    clock,
    ids,

    openAccount: openAccount(core),
    getAccount: core.getAccount,
    /** Streams whose one event never changes (accounts, terminals, API keys): start one, read its event. */
    startStream: payments.startStream,
    firstEvent: payments.firstEvent,
    registerTerminal: registerTerminal(core),
    listTerminals: listTerminals(core),

    createIntent: createIntent(core),
    async getPayment(input: unknown): Promise<PaymentRecord> {
      const { external_account_id, payment_id } = parseInput(GetPaymentInput, input);
      return core.recordOf(await payments.loadOwned(external_account_id, payment_id));
    },
    authorize: authorize(core),
    collectPaymentMethod: collectPaymentMethod(core),
    processPayment: processPayment(core),
    capture: capture(core),
    cancel: cancel(core),
    refund: refund(core),
    saveCard: saveCard(core),
    listCustomerCards: listCustomerCards(core),

    /** The commands the machine allows a payment now (for error messages and tooling). */
    async allowedNextSteps(accountId: string, paymentId: string): Promise<string[]> {
      return allowedCommands((await payments.loadOwned(accountId, paymentId)).snapshot);
    },

    /** Processors report through this (the simulators' connect() receives it too). */
    report: onReport,

    /** One reconciler pass: resolves attempts left without outcome (see src/engine/reconcile.ts). */
    reconcile: (reconcileOptions?: ReconcileOptions): Promise<ReconcileReport> => reconciler.reconcile(reconcileOptions),

    /** Reconciles now and then every intervalMs (a server's background duty); onPass sees each report. */
    startReconciler(intervalMs: number, onPass: (report: ReconcileReport | Error) => void = () => undefined): void {
      if (stopReconciling) return;
      // passes never overlap: the next waits for the one before
      let running = Promise.resolve();
      const pass = () => void (running = running.then(() => reconciler.reconcile().then(onPass, onPass)));
      pass();
      const timer = setInterval(pass, intervalMs);
      timer.unref();
      // stopping waits for the pass under way: the store must not close beneath it
      stopReconciling = () => (clearInterval(timer), running);
    },

    async close(): Promise<void> {
      await stopReconciling?.();
      await projections.stop();
      await store.close();
      await readModels.close();
    },
  };
}

export type Engine = ReturnType<typeof createEngine>;
