// Deterministic processor simulators (a sandbox): processor A with asynchronous and synchronous
// terminals, processor B with a client reader SDK, and stored-card charges on both. Test cards and
// test amounts (./test-cards.ts) select every outcome; time comes from the injected clock.
import type { Authorization, Card } from "../../machines/events.js";
import { setBounded } from "../bounded.js";
import type { Clock } from "../clock.js";
import { CardflowError, Conflict, NotFound, ProcessorRefused } from "../errors.js";
import { StoreUnavailable } from "../store/port.js";
import type { Ids } from "../ids.js";
import { Decimal, formatAmount } from "../money.js";
import { refuseUndefinedOptions } from "../options.js";
import { createLedger, type Ledger, type LedgerEntry } from "./ledger.js";
import { memorySide, type ProcessorSide } from "./processor-side.js";
import { injectedFault, NO_FAULT } from "./sandbox-faults.js";
import type { AuthorizationOutcome, PaymentView, ProcessorPort, ProcessorReport, Processors, RecordedOutcome } from "./port.js";
import { DEFAULT_TEST_CARD, TEST_PAYMENT_METHODS, testAmount, testCard, type TestCard, type TestOutcome } from "./test-cards.js";

export interface SimulatorOptions {
  clock: Clock;
  ids: Ids;
  /**
   * How captures complete: at once (`success`), or requested first (`capture_requested`) and
   * settled after captureSettleMs. The test amount 99.13 requests its captures either way.
   */
  captures?: "immediate" | "requested";
  /** A requested capture settles (succeeded) this long after it was requested. */
  captureSettleMs?: number;
  /** The terminal gives up waiting for the shopper after this (USER_TIMEOUT). */
  shopperTimeoutMs?: number;
  /** The processor answers a call (charge, authorize, capture, void, refund, save) after this. */
  processorLatencyMs?: number;
  /**
   * false (SANDBOX=off): no scripted outcomes; declining test cards and test amounts are approved
   * like any card. Default true.
   */
  scripted?: boolean;
  /**
   * What the processors keep on their side (calls, collections in progress, cards read and on
   * file): in memory when omitted; `fileSide(processorSideIn(DATA_DIR))` when served, so the
   * processes sharing it see one processor.
   */
  side?: ProcessorSide;
}

/** How a terminal finishes a collection with automatic capture (spec §3's three rows). */
export type TerminalCapture = "separately" | "on_terminal" | "requested";

/** A terminal's collection in progress (on the processor's side: any process may end it). */
interface Session {
  payment: PaymentView;
  /** The key the engine started the collection with: its outcome is recorded under it. */
  key: string;
}

/** A requested capture the processor will report settled (epoch ms). */
interface Settlement {
  amount: string;
  due: number;
}
/** How soon a settlement the store could not take is reported again. */
const SETTLE_RETRY_MS = 1_000;

/** A card the processor keeps on file. */
interface Vaulted {
  external_account_id: string;
  external_customer_id: string;
  number: string;
  card: Card;
}

/** Card on file needs an expiry of 03/30 or later (spec §4.8). */
export const canBeSavedOnFile = (card: Pick<Card, "exp_month" | "exp_year">) =>
  card.exp_year > 2030 || (card.exp_year === 2030 && Number(card.exp_month) >= 3);

export interface Simulators extends Processors {
  /** Test helpers acting as shopper and clerk on a simulated terminal. */
  terminal: {
    presentCard(terminalId: string, cardNumber?: string, options?: { capture?: TerminalCapture; tip?: string }): Promise<void>;
    clerkCancel(terminalId: string): Promise<void>;
    /** The payment a terminal is collecting for, if any. */
    collecting(terminalId: string): string | undefined;
    /** Resolves with the payment id once the terminal is collecting (a blocking auth has reached it). */
    untilCollecting(terminalId: string): Promise<string>;
  };
  /** The card a client SDK would read for this test card number. */
  cardFor(cardNumber: string, type: Card["type"]): Card;
  /** The processors' own record of every call, by idempotency key (the truth a test compares with). */
  ledger: Ledger;
}

/** Calls in flight are remembered for the last this many keys: a long-running process stays bounded in memory. */
const REMEMBERED = 10_000;

/**
 * The processor simulators: the returned object is itself the `Processors` to pass to
 * `createEngine({ processors: sims })`, with test helpers (`sims.terminal`, `sims.cardFor`).
 */
export function createSimulators(options: SimulatorOptions): Simulators {
  refuseUndefinedOptions("createSimulators", options);
  const { clock, ids, captures = "immediate", captureSettleMs = 1_000, shopperTimeoutMs = 120_000, processorLatencyMs = 0, scripted = true, side = memorySide() } = options;
  const ledger = createLedger(side);
  let report: ProcessorReport = async () => {
    throw new Error("simulators are not connected to an engine");
  };
  const collectingWaiters = new Map<string, ((paymentId: string) => void)[]>();
  /** This process's shopper timeouts, by terminal (the collection itself is on the processor's side). */
  const timeouts = new Map<string, () => void>();
  const memo = new Map<string, Promise<unknown>>();
  const collectingFor = (terminalId: string) => side.get<Session>("sessions", terminalId)?.payment.intent.payment_id;

  /**
   * At most one effect per idempotency key: the call runs once and its answer is recorded in the
   * ledger; a repeated key gets the recorded answer (a refusal is refused again).
   */
  function once<T>(key: string, run: () => Promise<LedgerEntry>, answer: (recorded: RecordedOutcome) => T, latencyMs = processorLatencyMs): Promise<T> {
    const known = ledger.get(key);
    if (known) return Promise.resolve().then(() => answer(replayRefusal(known)));
    let p = memo.get(key) as Promise<LedgerEntry> | undefined;
    if (!p) {
      const fault = scripted ? injectedFault(side, key) : NO_FAULT; // sandbox: a test's injected outage
      const act = () => fault.around(() =>
        run().then(
          (recorded) => (ledger.set(key, recorded), recorded),
          (error: unknown) => {
            if (error instanceof CardflowError) ledger.set(key, { call: "refused", code: error.code, message: error.message });
            throw error;
          },
        ));
      const wait = latencyMs + fault.latencyMs;
      setBounded(memo, key, (p = wait > 0 ? new Promise<void>((r) => clock.setTimer(wait, r)).then(act) : act()), REMEMBERED);
    }
    return p.then(answer);
  }

  function replayRefusal(recorded: RecordedOutcome): RecordedOutcome {
    if (recorded.call === "refused") throw new ProcessorRefused(recorded.message, recorded.code);
    return recorded;
  }

  /** The answer a call of this kind gave (a key reused for another kind of call is a caller's bug). */
  function as<C extends RecordedOutcome["call"]>(call: C) {
    return (recorded: RecordedOutcome) => {
      if (recorded.call !== call) throw new Error(`idempotency key reused: recorded ${recorded.call}, asked ${call}`);
      return recorded as Extract<RecordedOutcome, { call: C }>;
    };
  }

  const lookup = (number: string): TestCard => {
    const found = testCard(number);
    if (!found) throw new ProcessorRefused(`card ${number.slice(-4)} is not a test card of the simulator`, "invalid_test_card");
    return found;
  };

  function cardFor(number: string, type: Card["type"]): Card {
    return { ...lookup(number).card, type };
  }

  /** A declining card keeps its outcome; with an approving card a test amount selects one. */
  function testOutcome(payment: PaymentView, test: TestCard): TestOutcome {
    if (!scripted) return { approve: true };
    const key = `${payment.intent.payment_id}/${test.number}`;
    const attempt = (side.change<number>("attempts", key, (n) => (n ?? 0) + 1) ?? 0) + 1;
    if (!test.outcome.approve && !(test.outcome.firstAttemptOnly && attempt > 1)) return test.outcome;
    return testAmount(payment.intent.amount, payment.intent.currency) ?? { approve: true };
  }

  const requestsCapture = (payment: PaymentView) => {
    const selected = scripted ? testAmount(payment.intent.amount, payment.intent.currency) : undefined;
    return captures === "requested" || (selected?.approve === true && selected.captureRequested === true);
  };

  function authorization(payment: PaymentView, test: TestCard, type: Card["type"], tip = "0"): Authorization {
    const { currency, amount } = payment.intent;
    return {
      amount_authorized: formatAmount(new Decimal(amount).plus(tip), currency),
      tip_amount: formatAmount(tip, currency),
      donation_amount: formatAmount(0, currency),
      authorization_code: ids.id("auth").slice(-6).toUpperCase(),
      card: { ...test.card, type },
      avs_response_code: test.avs.code,
      avs_response_message: test.avs.message,
    };
  }

  function outcome(payment: PaymentView, test: TestCard, type: Card["type"], capture: TerminalCapture, tip?: string): AuthorizationOutcome {
    const selected = testOutcome(payment, test);
    if (!selected.approve) return { kind: "failed", last_error: selected.last_error, last_error_code: selected.last_error_code };
    const auth = authorization(payment, test, type, tip);
    if (payment.intent.capture_method === "manual" || capture === "separately") return { kind: "authorized", authorization: auth };
    if (capture === "requested" || requestsCapture(payment)) {
      settleLater(payment.intent.payment_id, auth.amount_authorized);
      return { kind: "capture_requested", authorization: auth };
    }
    return { kind: "captured", authorization: auth };
  }

  /**
   * A requested capture settles captureSettleMs later. The processor keeps it on its side until
   * cardflow has taken the report: a report the store cannot take now (an outage) is made again,
   * and a process that starts makes the ones a stopped or killed process left.
   */
  function settleLater(paymentId: string, amount: string) {
    side.set("settlements", paymentId, { amount, due: clock.now() + captureSettleMs } satisfies Settlement);
    settleIn(paymentId, captureSettleMs);
  }
  function settleIn(paymentId: string, ms: number) {
    clock.setTimer(ms, () => {
      const pending = side.get<Settlement>("settlements", paymentId);
      if (!pending) return; // another process reported it
      report(paymentId, { kind: "capture_settled", amount: pending.amount }).then(
        () => side.set("settlements", paymentId, undefined),
        (error: unknown) => {
          if (error instanceof StoreUnavailable) settleIn(paymentId, SETTLE_RETRY_MS);
          else side.set("settlements", paymentId, undefined); // refused: the payment awaits no settlement (any more)
        },
      );
    });
  }

  /**
   * Ends a terminal's collection (only the one `which` accepts: by default any), once across the
   * processes; its outcome is recorded under the key it was started with.
   */
  function endSession(terminalId: string, outcome: AuthorizationOutcome, which: (session: Session) => boolean = () => true): Session | undefined {
    const session = side.change<Session>("sessions", terminalId, (current) => (current && which(current) ? undefined : current));
    if (!session || !which(session)) return undefined;
    timeouts.get(terminalId)?.();
    timeouts.delete(terminalId);
    ledger.set(session.key, { call: "start_terminal", outcome, amount: session.payment.intent.amount });
    return session;
  }
  const CANCELED_BY_POS: AuthorizationOutcome = { kind: "failed", last_error: "Canceled by clerk", last_error_code: "POS_CANCEL" };
  const SHOPPER_TIMEOUT: AuthorizationOutcome = { kind: "failed", last_error: "Timed out waiting for shopper", last_error_code: "USER_TIMEOUT" };

  function port(): ProcessorPort {
    return {
      chargeStoredCard: ({ payment, key }) =>
        once(
          key,
          async () => {
            const stored = side.get<Vaulted>("vault", payment.intent.payment_method_id ?? "");
            const number = stored?.number ?? TEST_PAYMENT_METHODS[payment.intent.payment_method_id ?? ""] ?? DEFAULT_TEST_CARD;
            // automatic stored-card charges capture in the same step (spec §3)
            return { call: "authorize", outcome: outcome(payment, lookup(number), "card_not_present", "on_terminal"), amount: payment.intent.amount };
          },
          (r) => as("authorize")(r).outcome,
        ),

      startTerminalAuthorization: ({ payment, terminal, key }) =>
        once(
          key,
          async () => {
            const paymentId = payment.intent.payment_id;
            side.change<Session>("sessions", terminal.terminal_id, (busy) => {
              if (busy && busy.payment.intent.payment_id !== paymentId) {
                throw new Conflict(`terminal ${terminal.terminal_id} is busy collecting another payment`, "terminal_busy");
              }
              return { payment, key };
            });
            timeouts.get(terminal.terminal_id)?.();
            // the terminal gives up on the shopper; if this process is gone by then, the reconciler does
            timeouts.set(
              terminal.terminal_id,
              clock.setTimer(shopperTimeoutMs, () => {
                timeouts.delete(terminal.terminal_id);
                if (endSession(terminal.terminal_id, SHOPPER_TIMEOUT, (s) => s.key === key)) void report(paymentId, SHOPPER_TIMEOUT).catch(() => undefined);
              }),
            );
            collectingWaiters.get(terminal.terminal_id)?.forEach((wake) => wake(paymentId));
            collectingWaiters.delete(terminal.terminal_id);
            return { call: "start_terminal", outcome: null, amount: payment.intent.amount };
          },
          () => undefined,
          0, // the terminal starts at once; the shopper takes the time
        ),

      async cancelTerminalAuthorization({ payment, terminal_id }) {
        endSession(terminal_id, CANCELED_BY_POS, (s) => s.payment.intent.payment_id === payment.intent.payment_id);
      },

      async readCardFromClient({ payment, card_number }) {
        const test = lookup(card_number);
        side.set("cards", payment.intent.payment_id, test.number);
        return { ...test.card, type: payment.intent.payment_method_types === "card_present" ? "card_present" : "card_not_present" };
      },

      authorizeCollectedCard: ({ payment, key }) =>
        once(
          key,
          async () => {
            const number = side.get<string>("cards", payment.intent.payment_id) ?? DEFAULT_TEST_CARD;
            return { call: "authorize", outcome: outcome(payment, lookup(number), payment.card?.type ?? "card_present", "separately"), amount: payment.intent.amount };
          },
          (r) => as("authorize")(r).outcome,
        ),

      capture: ({ payment, amount, key }) =>
        once(
          key,
          async () => {
            if (requestsCapture(payment)) {
              settleLater(payment.intent.payment_id, amount);
              return { call: "capture", outcome: { kind: "capture_requested" }, amount };
            }
            return { call: "capture", outcome: { kind: "captured" }, amount };
          },
          (r) => as("capture")(r).outcome,
        ),

      void: ({ key }) => once(key, async () => ({ call: "void" }), (r) => void as("void")(r)),

      refund: ({ amount, key }) => once(key, async () => ({ call: "refund", refund_id: ids.id("re"), amount }), (r) => ({ refund_id: as("refund")(r).refund_id })),

      saveCard: ({ payment, external_customer_id, key }) =>
        once(
          key,
          async () => {
            const card = payment.card;
            if (!card) throw new ProcessorRefused("the payment has no card to save", "no_card");
            if (!canBeSavedOnFile(card)) {
              throw new ProcessorRefused(`card expiring ${card.exp_month}/${card.exp_year} cannot be saved on file (03/30 or later needed)`, "card_not_savable");
            }
            const payment_method_id = ids.id("pm");
            const number = side.get<string>("cards", payment.intent.payment_id);
            if (!number) throw new ProcessorRefused("the processor did not read this payment's card", "no_card");
            side.set("vault", payment_method_id, { external_account_id: payment.intent.external_account_id, external_customer_id, number, card } satisfies Vaulted);
            return { call: "save_card", payment_method_id };
          },
          (r) => ({ payment_method_id: as("save_card")(r).payment_method_id }),
        ),

      lookup: async (key) => ledger.get(key) ?? "never_received",

      async retrieveStoredCard({ external_account_id, external_customer_id, payment_method_id }) {
        const stored = side.get<Vaulted>("vault", payment_method_id);
        // a vaulted card is its account's and customer's only
        if (stored) return stored.external_account_id === external_account_id && stored.external_customer_id === external_customer_id ? { ...stored.card, type: "card_not_present" } : undefined;
        const number = TEST_PAYMENT_METHODS[payment_method_id];
        return number ? cardFor(number, "card_not_present") : undefined;
      },
    };
  }

  const ports = { A: port(), B: port() };

  return {
    get: (processor) => ports[processor],
    connect(r) {
      report = r;
      for (const [paymentId, { due }] of side.entries<Settlement>("settlements")) settleIn(paymentId, Math.max(0, due - clock.now()));
    },
    cardFor(number, type) {
      return cardFor(number, type);
    },
    ledger,
    terminal: {
      async presentCard(terminalId, cardNumber = DEFAULT_TEST_CARD, { capture = "separately", tip } = {}) {
        const session = side.get<Session>("sessions", terminalId);
        if (!session) throw new NotFound("collection in progress on terminal", terminalId);
        const test = lookup(cardNumber); // an unknown card is refused and the terminal keeps collecting
        const paymentId = session.payment.intent.payment_id;
        side.set("cards", paymentId, test.number);
        const result = outcome(session.payment, test, "card_present", capture, tip);
        // the shopper presents once: of two presentations at once (two processes), one ends it
        if (!endSession(terminalId, result, (s) => s.key === session.key)) throw new NotFound("collection in progress on terminal", terminalId);
        await report(paymentId, result);
      },
      async clerkCancel(terminalId) {
        const session = endSession(terminalId, CANCELED_BY_POS);
        if (!session) throw new NotFound("collection in progress on terminal", terminalId);
        await report(session.payment.intent.payment_id, CANCELED_BY_POS);
      },
      collecting: collectingFor,
      untilCollecting(terminalId) {
        const current = collectingFor(terminalId);
        if (current) return Promise.resolve(current);
        return new Promise((resolve) => collectingWaiters.set(terminalId, [...(collectingWaiters.get(terminalId) ?? []), resolve]));
      },
    },
  };
}
