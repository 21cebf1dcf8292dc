// What every command of the engine works with: the ports (store, read models, processors, clock,
// ids), the payment streams, the projections, and the few lookups commands share. createEngine
// builds one core and hands it to each command (./commands/*).
import { streams, type Card } from "../../machines/events.js";
import { stateOf } from "../../machines/fold.js";
import { customerCardKey, customerCardsProjection, type CustomerCardRecord } from "../../projections/customer-cards.js";
import { paymentRecord, type PaymentRecord } from "../present/payment-record.js";
import { PROJECTIONS, RETIRED_PROJECTIONS } from "../../projections/registry.js";
import { createProjectionRunner } from "../../projections/runner.js";
import type { TerminalRecord } from "../../projections/terminals.js";
import { setBounded } from "../bounded.js";
import { systemClock, type Clock } from "../clock.js";
import { Conflict, InvalidRequest, NotFound, TransitionNotAllowed } from "../errors.js";
import { randomIds, type Ids } from "../ids.js";
import { InvalidAmount, parseAmount, type Decimal } from "../money.js";
import type { PaymentView, ProcessorPort, Processors } from "../processors/port.js";
import { createSimulators } from "../processors/simulator.js";
import { TEST_PAYMENT_METHODS } from "../processors/test-cards.js";
import { createMemoryReadModels, createMemoryStore } from "../store/memory/index.js";
import type { EventStore, ReadModelStore } from "../store/port.js";
import { allowedCommands, commandAllowed, type Command } from "./allowed.js";
import type { AttemptFault } from "./attempt.js";
import { createPaymentStreams, type Account, type Loaded } from "./payment-streams.js";

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

export function createCore(options: EngineOptions) {
  const clock = options.clock ?? systemClock;
  const ids = options.ids ?? randomIds();
  const store = options.store ?? createMemoryStore();
  const readModels = options.readModels ?? createMemoryReadModels();
  const processors = options.processors ?? createSimulators({ clock, ids });
  const projections = createProjectionRunner({ store, readModels, projections: PROJECTIONS, retired: RETIRED_PROJECTIONS });
  const payments = createPaymentStreams({ store, clock, ids, cacheSize: options.cacheSize ?? 10_000 });

  const viewOf = (loaded: Loaded) => loaded.snapshot.context as PaymentView;
  // A Loaded never changes, so neither does its record: presented once per state (status reads of
  // an unchanged payment, a command's answer), frozen since every caller gets the same object.
  const records = new WeakMap<Loaded, PaymentRecord>();
  function recordOf(loaded: Loaded): PaymentRecord {
    let record = records.get(loaded);
    if (!record) {
      record = paymentRecord(stateOf(loaded.snapshot), loaded.request_id);
      if (record.payment) Object.freeze(record.payment);
      records.set(loaded, Object.freeze(record));
    }
    return record;
  }
  const processorOf = (loaded: Loaded): ProcessorPort => processors.get(loaded.snapshot.context.processor ?? viewOf(loaded).intent.processor);

  /** The machine refuses the command now: 409, naming the status and what is allowed instead. */
  function refuse(loaded: Loaded, command: string, reason?: string): never {
    const attempt = loaded.snapshot.context.attempt;
    if (attempt) {
      // another process's call (or one a crash left open, until the reconciler closes it)
      throw new Conflict(`payment ${viewOf(loaded).intent.payment_id} has a processor call in flight (${attempt.type} ${attempt.data.attempt_id}); retry shortly`, "attempt_in_flight");
    }
    throw new TransitionNotAllowed(viewOf(loaded).intent.payment_id, command, String(loaded.snapshot.value), allowedCommands(loaded.snapshot), reason);
  }

  function requireAllowed(loaded: Loaded, command: Command, reason?: string) {
    if (!commandAllowed(loaded.snapshot, command)) refuse(loaded, command, reason);
  }

  async function getAccount(accountId: string): Promise<Account> {
    const opened = await payments.firstEvent(streams.account(accountId));
    if (!opened) throw new NotFound("merchant account", accountId, "external_account_id");
    return opened.data as Account;
  }

  async function getTerminal(accountId: string, terminalId: string): Promise<TerminalRecord> {
    const registered = await payments.firstEvent(streams.terminal(terminalId));
    const data = registered?.data as (TerminalRecord & { registered_at: string }) | undefined;
    if (!data || data.external_account_id !== accountId) throw new NotFound("terminal", terminalId, "terminal_id");
    return data;
  }

  // Cards on file are never changed nor removed once saved: one found is kept (bounded, like the
  // payment states), so charging a card on file costs no read-model round trip after the first.
  // A card is found only for the account AND the customer it was saved for (issue 25): under
  // another customer it is unknown, the same answer as a card that never existed.
  const storedCards = new Map<string, Card>();
  async function findStoredCard(account: Account, customerId: string, paymentMethodId: string): Promise<Card | undefined> {
    const key = customerCardKey(account.external_account_id, customerId, paymentMethodId);
    const known = storedCards.get(key);
    if (known) return known;
    const processor = () =>
      processors.get(account.processor).retrieveStoredCard({ external_account_id: account.external_account_id, external_customer_id: customerId, payment_method_id: paymentMethodId });
    // a sandbox test token is anyone's and needs no read model: it never waits (outside the
    // sandbox no processor knows it: unknown)
    if (Object.hasOwn(TEST_PAYMENT_METHODS, paymentMethodId)) return processor();
    // A card saved here (CardSaved, folded into customer_cards) is found by its token in the account
    // and is its customer's only, whatever a processor would answer. Not there yet? Saved moments
    // ago: the read models reflect every write acknowledged before this request once caughtUp()
    // returns (bounded, shared with every other waiting read). Never saved here: the processor's
    // own vault decides (for this customer).
    const savedHere = async () =>
      (await readModels.query<CustomerCardRecord>(customerCardsProjection.name, { where: { account: account.external_account_id, payment_method_id: paymentMethodId }, order: ["key"], direction: "asc", limit: 1 }))[0];
    await projections.ready();
    let saved = await savedHere();
    if (!saved) {
      await projections.caughtUp();
      saved = await savedHere();
    }
    if (!saved) return processor();
    if (saved.external_customer_id !== customerId) return undefined;
    const { brand, last_4, exp_month, exp_year, cardholder_name, funding } = saved;
    const card: Card = { type: "card_not_present", brand, last_4, exp_month, exp_year, cardholder_name, funding: funding as Card["funding"] };
    setBounded(storedCards, key, card, options.cacheSize ?? 10_000);
    return card;
  }

  function amountIn(input: unknown, currency: string, param = "amount"): Decimal {
    try {
      return parseAmount(input, currency);
    } catch (error) {
      if (error instanceof InvalidAmount) throw new InvalidRequest(`${param}: ${error.reason}`, param, "amount_invalid");
      throw error;
    }
  }

  return {
    store,
    readModels,
    processors,
    clock,
    ids,
    projections,
    payments,
    syncAuthTimeoutMs: options.syncAuthTimeoutMs ?? 120_000,
    reconcileGraceMs: options.reconcileGraceMs ?? 30_000,
    fault: options.fault,
    viewOf,
    recordOf,
    processorOf,
    refuse,
    requireAllowed,
    getAccount,
    getTerminal,
    findStoredCard,
    amountIn,
  };
}

export type Core = ReturnType<typeof createCore>;
