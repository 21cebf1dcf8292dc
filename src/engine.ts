// The engine: command -> decide events -> ask the machine -> append with the expected revision ->
// return the payment record. Commands on one payment are serialized in this process; across
// processes the store's optimistic concurrency decides and the loser re-decides on fresh state.
import { timingSafeEqual } from "node:crypto";
import {
  PaymentEvent,
  streams,
  type Card,
  type DomainEvent,
  type PaymentEventOf,
  type TerminalType,
} from "../machines/events.js";
import { hasTag, stateOf } from "../machines/fold.js";
import { customerCardKey, customerCardsProjection, type CustomerCardRecord } from "../projections/customer-cards.js";
import { paymentRecord, type PaymentRecord } from "../projections/payment-record.js";
import { paymentsProjection } from "../projections/payments.js";
import type { Projection } from "../projections/projection.js";
import { createProjectionRunner, type ProjectionRunner } from "../projections/runner.js";
import { terminalKey, terminalsProjection, type TerminalRecord } from "../projections/terminals.js";
import { timelineProjection } from "../projections/timeline.js";
import { allowedCommands, can, cardSavedProbe, commandAllowed, type Command } from "./engine/allowed.js";
import { outcomeEvents } from "./engine/outcomes.js";
import { createPaymentStreams, type Account, type CommandContext, type CreatedIntent, type Loaded } from "./engine/payment-streams.js";
import { isoTimestamp, systemClock, type Clock } from "./clock.js";
import { Conflict, InvalidRequest, NotFound, ProcessorRefused, TransitionNotAllowed } from "./errors.js";
import { randomIds, type Ids } from "./ids.js";
import {
  AuthorizeInput,
  CancelInput,
  CaptureInput,
  CollectPaymentMethodInput,
  CreateIntentInput,
  GetPaymentInput,
  OpenAccountInput,
  parseInput,
  ProcessPaymentInput,
  RefundInput,
  RegisterTerminalInput,
  SaveCardInput,
} from "./inputs.js";
import { InvalidAmount, formatAmount, isCurrency, parseAmount, type Decimal } from "./money.js";
import { refuseUndefinedOptions } from "./options.js";
import type { PaymentView, ProcessorEvent, ProcessorPort, Processors } from "./processors/port.js";
import { createSimulators } from "./processors/simulator.js";
import { createMemoryReadModels } from "./store/memory-read-models.js";
import { createMemoryStore } from "./store/memory.js";
import { WrongExpectedRevision, type EventStore, type ReadModelStore } from "./store/port.js";

export type { Account, CommandContext, CreatedIntent } from "./engine/payment-streams.js";

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
}

export const PROJECTIONS: readonly Projection<any>[] = [paymentsProjection, terminalsProjection, customerCardsProjection, timelineProjection];

export function createEngine(options: EngineOptions = {}) {
  refuseUndefinedOptions("createEngine", options, { processors: "createSimulators() returns the processors themselves: createEngine({ processors: sims })" });
  const clock = options.clock ?? systemClock;
  const ids = options.ids ?? randomIds();
  const store = options.store ?? createMemoryStore();
  const readModels = options.readModels ?? createMemoryReadModels();
  const processors = options.processors ?? createSimulators({ clock, ids });
  const syncAuthTimeoutMs = options.syncAuthTimeoutMs ?? 120_000;
  const cacheSize = options.cacheSize ?? 10_000;
  const projections: ProjectionRunner = createProjectionRunner({ store, readModels, projections: PROJECTIONS });
  if (options.liveProjections) projections.start();

  const payments = createPaymentStreams({ store, clock, ids, cacheSize });
  const { load, loadOwned, onPayment, startStream, firstEvent, waitWhileCollecting } = payments;
  const appendPayment = payments.append;

  const viewOf = (loaded: Loaded) => loaded.snapshot.context as PaymentView;
  const statusOf = (loaded: Loaded) => String(loaded.snapshot.value);
  const recordOf = (loaded: Loaded) => paymentRecord(stateOf(loaded.snapshot), loaded.request_id);
  const processorOf = (loaded: Loaded): ProcessorPort => processors.get(loaded.snapshot.context.processor ?? viewOf(loaded).intent.processor);
  /** The processor's idempotency key: one effect per decision on one revision of the stream. */
  const keyOf = (loaded: Loaded, command: string) => `${viewOf(loaded).intent.payment_id}:${loaded.revision}:${command}`;

  const allows = (loaded: Loaded, command: Command) => commandAllowed(loaded.snapshot, command);

  function requireAllowed(loaded: Loaded, command: Command, reason?: string) {
    if (!allows(loaded, command)) {
      throw new TransitionNotAllowed(viewOf(loaded).intent.payment_id, command, statusOf(loaded), allowedCommands(loaded.snapshot), reason);
    }
  }

  async function captureNow(paymentId: string, loaded: Loaded, amount: string, ctx: CommandContext): Promise<Loaded> {
    const result = await processorOf(loaded).capture({ payment: viewOf(loaded), amount, key: keyOf(loaded, "capture") });
    const type = result.kind === "captured" ? "PaymentCaptured" : "CaptureRequested";
    return appendPayment(paymentId, loaded, [{ type, version: 1, data: { amount, authorization: null } }], ctx, "capture");
  }

  async function saveCardNow(paymentId: string, loaded: Loaded, customerId: string, ctx: CommandContext): Promise<Loaded> {
    const payment = viewOf(loaded);
    const { payment_method_id } = await processorOf(loaded).saveCard({ payment, external_customer_id: customerId, key: keyOf(loaded, "save_card") });
    const data = { payment_method_id, external_account_id: payment.intent.external_account_id, external_customer_id: customerId, card: payment.card! };
    return appendPayment(paymentId, loaded, [{ type: "CardSaved", version: 1, data }], ctx, "save_card");
  }

  /**
   * What follows on its own (spec §3/§4.4): an automatic-capture payment that reached
   * requires_capture is captured; a synchronous-terminal payment that should save its card does.
   */
  async function followUp(paymentId: string, loaded: Loaded, ctx: CommandContext): Promise<Loaded> {
    const { intent, terminal, amount_capturable } = viewOf(loaded);
    if (intent.capture_method === "automatic" && allows(loaded, "capture")) {
      loaded = await captureNow(paymentId, loaded, amount_capturable, ctx);
    }
    const savesOnTerminal = terminal?.terminal_type === "A_sync" && intent.allow_saving_card && intent.external_customer_id !== null;
    if (savesOnTerminal && allows(loaded, "save_card")) {
      try {
        loaded = await saveCardNow(paymentId, loaded, intent.external_customer_id!, ctx);
      } catch (error) {
        // the payment stands; the card just is not on file (e.g. expires before 03/30)
        if (!(error instanceof ProcessorRefused)) throw error;
      }
    }
    return loaded;
  }

  // ---- processor B client SDK ------------------------------------------------------------------

  /** A client secret is `<payment_id>_secret_...` (created with the intent). */
  function paymentIdOfSecret(clientSecret: string): string {
    const at = clientSecret.indexOf("_secret_");
    if (at <= 0) throw new NotFound("payment for client secret", "(redacted)", "client_secret");
    return clientSecret.slice(0, at);
  }

  function requireSecret(loaded: Loaded, clientSecret: string) {
    const expected = viewOf(loaded).intent.client_secret;
    // constant-time comparison: a secret must not be guessable from response timings
    const same = expected !== null && expected.length === clientSecret.length && timingSafeEqual(Buffer.from(expected), Buffer.from(clientSecret));
    if (!same) throw new NotFound("payment for client secret", "(redacted)", "client_secret");
  }

  const collectedByClientSdk = (loaded: Loaded) =>
    viewOf(loaded).processor === "B" && viewOf(loaded).card !== null && hasTag(loaded.snapshot, "collecting_card");

  /** Authorizes the card the client SDK collected; automatic capture follows. */
  async function processCollected(paymentId: string, loaded: Loaded, ctx: CommandContext): Promise<Loaded> {
    const outcome = await processorOf(loaded).authorizeCollectedCard({ payment: viewOf(loaded), key: keyOf(loaded, "authorize") });
    return followUp(paymentId, await appendPayment(paymentId, loaded, outcomeEvents(outcome), ctx, "authorize"), ctx);
  }

  /** Records what a processor reports about a payment (terminal outcome, capture settled). */
  async function report(paymentId: string, event: ProcessorEvent): Promise<void> {
    const loaded = await load(paymentId);
    if (!loaded) throw new NotFound("payment", paymentId);
    const ctx: CommandContext = { actor: `processor:${loaded.snapshot.context.processor}` };
    await onPayment(null, paymentId, async (current) => {
      if (!hasTag(current.snapshot, "awaiting_processor")) {
        throw new TransitionNotAllowed(paymentId, "record processor outcome", statusOf(current), allowedCommands(current.snapshot), "the payment awaits no processor outcome");
      }
      const events: PaymentEvent[] =
        event.kind === "capture_settled" ? [{ type: "PaymentCaptured", version: 1, data: { amount: event.amount, authorization: null } }] : outcomeEvents(event);
      const after = await appendPayment(paymentId, current, events, ctx, "record processor outcome");
      return followUp(paymentId, after, ctx);
    });
    payments.notify(paymentId);
  }
  processors.connect(report);

  // ---- accounts and terminals ----------------------------------------------------------------

  async function getAccount(accountId: string): Promise<Account> {
    const opened = await firstEvent(streams.account(accountId));
    if (!opened) throw new NotFound("merchant account", accountId, "external_account_id");
    return opened.data as Account;
  }

  async function getTerminal(accountId: string, terminalId: string): Promise<TerminalRecord> {
    const registered = await firstEvent(streams.terminal(terminalId));
    const data = registered?.data as (TerminalRecord & { registered_at: string }) | undefined;
    if (!data || data.external_account_id !== accountId) throw new NotFound("terminal", terminalId, "terminal_id");
    return data;
  }

  async function findStoredCard(account: Account, customerId: string, paymentMethodId: string): Promise<Card | undefined> {
    // cards on file are never changed once saved: catch the read models up only when it is not there yet
    const savedCard = () => readModels.get<CustomerCardRecord>(customerCardsProjection.name, customerCardKey(account.external_account_id, customerId, paymentMethodId));
    const saved = (await savedCard()) ?? (await projections.catchUp(), await savedCard());
    if (saved) {
      const { brand, last_4, exp_month, exp_year, cardholder_name, funding } = saved;
      return { type: "card_not_present", brand, last_4, exp_month, exp_year, cardholder_name, funding: funding as Card["funding"] };
    }
    return processors.get(account.processor).retrieveStoredCard({ external_account_id: account.external_account_id, payment_method_id: paymentMethodId });
  }

  function amountIn(input: unknown, currency: string, param = "amount"): Decimal {
    try {
      return parseAmount(input, currency);
    } catch (error) {
      if (error instanceof InvalidAmount) throw new InvalidRequest(`${param}: ${error.reason}`, param, "amount_invalid");
      throw error;
    }
  }

  // ---- the library API -----------------------------------------------------------------------

  return {
    store,
    readModels,
    projections,
    clock,
    ids,

    async openAccount(input: unknown, ctx: CommandContext = {}): Promise<Account> {
      const { external_account_id, processor, currency } = parseInput(OpenAccountInput, input);
      if (!isCurrency(currency)) throw new InvalidRequest(`currency: ${currency} is not an ISO 4217 currency`, "currency", "parameter_invalid");
      const event: DomainEvent = { type: "AccountOpened", version: 1, data: { external_account_id, processor, currency } };
      try {
        await startStream(streams.account(external_account_id), event, ctx);
      } catch (error) {
        if (error instanceof WrongExpectedRevision) throw new Conflict(`merchant account ${external_account_id} already exists`, "account_exists");
        throw error;
      }
      return { external_account_id, processor, currency };
    },

    getAccount,
    /** Streams whose one event never changes (accounts, terminals, API keys): start one, read its event. */
    startStream,
    firstEvent,

    async registerTerminal(input: unknown, ctx: CommandContext = {}): Promise<TerminalRecord> {
      const { external_account_id, terminal_type, label = null, serial_number = null } = parseInput(RegisterTerminalInput, input);
      await getAccount(external_account_id);
      const terminal_id = ids.id("tmr");
      const data = { terminal_id, external_account_id, terminal_type, label, serial_number, registered_at: isoTimestamp(clock.now()) };
      const { registered_at, ...terminal } = data;
      const record: TerminalRecord = { ...terminal, date_created: registered_at };
      await startStream(streams.terminal(terminal_id), { type: "TerminalRegistered", version: 1, data }, ctx, ctx.idempotency?.(record));
      return record;
    },

    async listTerminals(accountId: string): Promise<TerminalRecord[]> {
      await getAccount(accountId);
      await projections.catchUp();
      return readModels.list<TerminalRecord>(terminalsProjection.name, terminalKey(accountId, ""));
    },

    async createIntent(input: unknown, ctx: CommandContext = {}): Promise<CreatedIntent> {
      const req = parseInput(CreateIntentInput, input);
      const account = await getAccount(req.external_account_id);
      const amount = amountIn(req.amount, account.currency);
      let stored_card: Card | null = null;
      if (req.payment_method_id !== undefined) {
        stored_card = (await findStoredCard(account, req.external_customer_id!, req.payment_method_id)) ?? null;
        if (!stored_card) {
          throw new InvalidRequest(`payment_method_id: no card ${req.payment_method_id} on file for customer ${req.external_customer_id}`, "payment_method_id", "resource_missing");
        }
      }
      const payment_id = ids.id("pi");
      const collectsOnClient = req.payment_method_types === "card_present" || (account.processor === "B" && req.payment_method_id === undefined);
      const client_secret = collectsOnClient ? `${payment_id}_${ids.secret("secret")}` : null;
      const created: PaymentEventOf<"PaymentIntentCreated"> = {
        type: "PaymentIntentCreated",
        version: 1,
        data: {
          payment_id,
          external_account_id: account.external_account_id,
          amount: formatAmount(amount, account.currency),
          currency: account.currency,
          payment_method_types: req.payment_method_types,
          capture_method: req.capture_method,
          processor: account.processor,
          external_transaction_id: req.external_payment_id ?? req.external_transaction_id ?? null,
          external_customer_id: req.external_customer_id ?? null,
          payment_method_id: req.payment_method_id ?? null,
          stored_card,
          allow_saving_card: req.allow_saving_card ?? false,
          client_secret,
          date_created: isoTimestamp(clock.now()),
        },
      };
      const answer = ctx.idempotency && ((record: object) => ctx.idempotency!({ ...(record as PaymentRecord), client_secret }));
      const loaded = await payments.create(payment_id, [created], { ...ctx, idempotency: answer });
      return { ...recordOf(loaded), client_secret };
    },

    async getPayment(input: unknown): Promise<PaymentRecord> {
      const { external_account_id, payment_id } = parseInput(GetPaymentInput, input);
      return recordOf(await loadOwned(external_account_id, payment_id));
    },

    /**
     * Authorizes: a stored card is charged; a processor A terminal starts collecting (the
     * asynchronous type returns at once, the synchronous one blocks until the outcome); a card
     * the processor B SDK collected is processed.
     */
    async authorize(input: unknown, ctx: CommandContext = {}): Promise<PaymentRecord> {
      const req = parseInput(AuthorizeInput, input);
      let terminalType: TerminalType | null = null;
      const loaded = await onPayment(req.external_account_id, req.payment_id, async (loaded) => {
        const payment = viewOf(loaded);
        if (payment.intent.payment_method_id !== null) {
          if (req.terminal_id !== undefined) throw new InvalidRequest("terminal_id is not sent for a stored-card charge", "terminal_id", "parameter_unexpected");
          requireAllowed(loaded, "authorize");
          const outcome = await processorOf(loaded).chargeStoredCard({ payment, key: keyOf(loaded, "authorize") });
          return appendPayment(req.payment_id, loaded, outcomeEvents(outcome), ctx, "authorize");
        }
        if (collectedByClientSdk(loaded)) return processCollected(req.payment_id, loaded, ctx);
        if (payment.intent.payment_method_types !== "card_present") {
          throw new TransitionNotAllowed(req.payment_id, "authorize", statusOf(loaded), allowedCommands(loaded.snapshot), "a card not present is charged from a card on file, or collected by the processor B client SDK first");
        }
        if (req.terminal_id === undefined) throw new InvalidRequest("terminal_id: required to authorize a card-present payment", "terminal_id", "parameter_missing");
        const terminal = await getTerminal(req.external_account_id, req.terminal_id);
        if (terminal.terminal_type === "B_reader") {
          throw new InvalidRequest(`terminal_id: ${terminal.terminal_id} is a processor B reader; its card is collected by the client SDK with the intent's client secret`, "terminal_id", "terminal_collects_with_client_sdk");
        }
        const started: PaymentEvent = { type: "TerminalAuthorizationStarted", version: 1, data: { terminal_id: terminal.terminal_id, terminal_type: terminal.terminal_type } };
        // refused before the terminal is asked: a second auth must not disturb a collection in progress
        if (!can(loaded.snapshot, started)) {
          throw new TransitionNotAllowed(req.payment_id, "authorize", statusOf(loaded), allowedCommands(loaded.snapshot), "a terminal authorization is allowed from requires_payment_method or error");
        }
        const port = processors.get("A");
        await port.startTerminalAuthorization({ payment, terminal, key: keyOf(loaded, "authorize") });
        try {
          terminalType = terminal.terminal_type;
          return await appendPayment(req.payment_id, loaded, [started], ctx, "authorize");
        } catch (error) {
          await port.cancelTerminalAuthorization({ payment, terminal_id: terminal.terminal_id });
          throw error;
        }
      });
      if (terminalType !== "A_sync") return recordOf(loaded);
      // spec §4.4: the synchronous terminal blocks until the shopper pays or cancels, up to 120 s
      const collected = await waitWhileCollecting(req.payment_id, syncAuthTimeoutMs);
      if (!collected) {
        await onPayment(req.external_account_id, req.payment_id, async (current) => {
          if (!hasTag(current.snapshot, "collecting_card")) return current;
          await processors.get("A").cancelTerminalAuthorization({ payment: viewOf(current), terminal_id: req.terminal_id! });
          const timedOut: PaymentEvent = { type: "AuthorizationFailed", version: 1, data: { last_error: "Timed out waiting for shopper", last_error_code: "USER_TIMEOUT" } };
          return appendPayment(req.payment_id, current, [timedOut], { ...ctx, actor: "processor:A" }, "authorize");
        });
      }
      return recordOf(await loadOwned(req.external_account_id, req.payment_id));
    },

    /** Processor B client SDK: a card read on a reader or a form, for the intent of the client secret. */
    async collectPaymentMethod(input: unknown, ctx: CommandContext = {}): Promise<PaymentRecord> {
      const { client_secret, card_number = "4242424242424242", terminal_id } = parseInput(CollectPaymentMethodInput, input);
      const paymentId = paymentIdOfSecret(client_secret);
      const loaded = await onPayment(null, paymentId, async (loaded) => {
        const payment = viewOf(loaded);
        requireSecret(loaded, client_secret);
        if (terminal_id !== undefined) {
          const terminal = await getTerminal(payment.intent.external_account_id, terminal_id);
          if (terminal.terminal_type !== "B_reader") throw new InvalidRequest(`terminal_id: ${terminal_id} is not a processor B reader`, "terminal_id", "parameter_invalid");
        }
        requireAllowed(loaded, "collect_payment_method");
        const card = await processors.get("B").readCardFromClient({ payment, card_number });
        const event: PaymentEvent = { type: "PaymentMethodCollected", version: 1, data: { card, terminal_id: terminal_id ?? null } };
        return appendPayment(paymentId, loaded, [event], ctx, "collect_payment_method");
      });
      return recordOf(loaded);
    },

    /** Processor B client SDK: processes the payment whose card the SDK collected (spec §4.8). */
    async processPayment(input: unknown, ctx: CommandContext = {}): Promise<PaymentRecord> {
      const { client_secret } = parseInput(ProcessPaymentInput, input);
      const paymentId = paymentIdOfSecret(client_secret);
      const loaded = await onPayment(null, paymentId, async (loaded) => {
        requireSecret(loaded, client_secret);
        if (!collectedByClientSdk(loaded)) {
          throw new TransitionNotAllowed(paymentId, "process_payment", statusOf(loaded), allowedCommands(loaded.snapshot), "the client SDK processes a payment after collecting its payment method");
        }
        return processCollected(paymentId, loaded, ctx);
      });
      return recordOf(loaded);
    },

    async capture(input: unknown, ctx: CommandContext = {}): Promise<PaymentRecord> {
      const req = parseInput(CaptureInput, input);
      const loaded = await onPayment(req.external_account_id, req.payment_id, async (loaded) => {
        const amount = formatAmount(amountIn(req.amount, viewOf(loaded).intent.currency), viewOf(loaded).intent.currency);
        const event: PaymentEvent = { type: "CaptureRequested", version: 1, data: { amount, authorization: null } };
        if (!can(loaded.snapshot, event)) {
          requireAllowed(loaded, "capture");
          throw new InvalidRequest(`amount: ${amount} exceeds amount_capturable ${viewOf(loaded).amount_capturable}`, "amount", "amount_too_large");
        }
        return captureNow(req.payment_id, loaded, amount, ctx);
      });
      return recordOf(loaded);
    },

    /** Extension: void before capture (a terminal still collecting is stopped). */
    async cancel(input: unknown, ctx: CommandContext = {}): Promise<PaymentRecord> {
      const req = parseInput(CancelInput, input);
      const loaded = await onPayment(req.external_account_id, req.payment_id, async (loaded) => {
        requireAllowed(loaded, "cancel");
        const payment = viewOf(loaded);
        // stop a terminal that is still collecting; release an authorization (nothing is captured before cancel)
        if (hasTag(loaded.snapshot, "collecting_card") && payment.terminal) {
          await processorOf(loaded).cancelTerminalAuthorization({ payment, terminal_id: payment.terminal.terminal_id });
        }
        if (payment.authorization !== null) await processorOf(loaded).void({ payment, key: keyOf(loaded, "cancel") });
        const event: PaymentEvent = { type: "PaymentCanceled", version: 1, data: { cancellation_reason: req.cancellation_reason ?? null } };
        return appendPayment(req.payment_id, loaded, [event], ctx, "cancel");
      });
      return recordOf(loaded);
    },

    /** Extension: full (amount omitted) or partial refund, never above amount_refundable. */
    async refund(input: unknown, ctx: CommandContext = {}): Promise<PaymentRecord> {
      const req = parseInput(RefundInput, input);
      const loaded = await onPayment(req.external_account_id, req.payment_id, async (loaded) => {
        requireAllowed(loaded, "refund");
        const payment = viewOf(loaded);
        const refundable = recordOf(loaded).amount_refundable;
        const amount = req.amount === undefined ? refundable : formatAmount(amountIn(req.amount, payment.intent.currency), payment.intent.currency);
        const probe: PaymentEvent = { type: "PaymentRefunded", version: 1, data: { refund_id: "probe", amount, reason: null } };
        if (!can(loaded.snapshot, probe)) throw new InvalidRequest(`amount: ${amount} exceeds amount_refundable ${refundable}`, "amount", "amount_too_large");
        const { refund_id } = await processorOf(loaded).refund({ payment, amount, key: keyOf(loaded, "refund") });
        const event: PaymentEvent = { type: "PaymentRefunded", version: 1, data: { refund_id, amount, reason: req.reason ?? null } };
        return appendPayment(req.payment_id, loaded, [event], ctx, "refund");
      });
      return recordOf(loaded);
    },

    /** Spec §4.7: saves the card of the payment on file for the customer. */
    async saveCard(input: unknown, ctx: CommandContext = {}): Promise<CustomerCardRecord> {
      const req = parseInput(SaveCardInput, input);
      const loaded = await onPayment(req.external_account_id, req.payment_id, async (loaded) => {
        const saved = viewOf(loaded).saved_card;
        // saving again for the same customer answers with the card already saved
        if (saved?.external_customer_id === req.external_customer_id) return loaded;
        const reason = viewOf(loaded).terminal?.terminal_type === "A_async" ? "the asynchronous terminal type does not support card on file" : undefined;
        if (!can(loaded.snapshot, cardSavedProbe(loaded.snapshot, req.external_customer_id))) {
          throw new TransitionNotAllowed(req.payment_id, "save_card", statusOf(loaded), allowedCommands(loaded.snapshot), reason ?? "this payment's card cannot be saved now");
        }
        return saveCardNow(req.payment_id, loaded, req.external_customer_id, ctx);
      });
      const { intent, saved_card } = viewOf(loaded);
      await projections.catchUp();
      const key = customerCardKey(intent.external_account_id, saved_card!.external_customer_id, saved_card!.payment_method_id);
      return (await readModels.get<CustomerCardRecord>(customerCardsProjection.name, key))!;
    },

    /** Spec §2.3: a customer's cards on file, found by the external customer id. */
    async listCustomerCards(accountId: string, customerId: string): Promise<CustomerCardRecord[]> {
      await getAccount(accountId);
      await projections.catchUp();
      return readModels.list<CustomerCardRecord>(customerCardsProjection.name, customerCardKey(accountId, customerId));
    },

    /** The commands the machine allows a payment now (for error messages and tooling). */
    async allowedNextSteps(accountId: string, paymentId: string): Promise<string[]> {
      return allowedCommands((await loadOwned(accountId, paymentId)).snapshot);
    },

    /** Processors report through this (the simulators' connect() receives it too). */
    report,

    async close(): Promise<void> {
      await projections.stop();
      await store.close();
      await readModels.close();
    },
  };
}

export type Engine = ReturnType<typeof createEngine>;
