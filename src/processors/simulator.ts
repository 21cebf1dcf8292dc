// Deterministic processor simulators (a sandbox): processor A with asynchronous and synchronous
// terminals, processor B with a client reader SDK, and stored-card charges on both. Test cards and
// test amounts (./test-cards.ts) select every outcome; time comes from the injected clock. The
// parts, in ./simulator/: one effect per idempotency key (idempotent-calls.ts), the scripted
// outcomes (scripted-outcomes.ts), requested captures settling later (settlements.ts), terminal
// collections (terminal-sessions.ts), cards on file (card-vault.ts); this file composes them into
// the processor port.
import type { Card } from "../../machines/events.js";
import type { Clock } from "../clock.js";
import type { Ids } from "../ids.js";
import { checkOptions } from "../options.js";
import { createLedger, type Ledger } from "./ledger.js";
import { memorySide, type ProcessorSide } from "./processor-side.js";
import type { ProcessorPort, ProcessorReport, Processors } from "./port.js";
import { createCardVault } from "./simulator/card-vault.js";
import { as, createOnce } from "./simulator/idempotent-calls.js";
import { cardFor, createScriptedOutcomes, testCardOf, type TerminalCapture } from "./simulator/scripted-outcomes.js";
import { reportAgainWhileUnavailable } from "./simulator/report-again.js";
import { createSettlements } from "./simulator/settlements.js";
import { createTerminalSessions } from "./simulator/terminal-sessions.js";
import { DEFAULT_TEST_CARD } from "./test-cards.js";

export { canBeSavedOnFile } from "./simulator/card-vault.js";
export type { TerminalCapture } from "./simulator/scripted-outcomes.js";

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

export interface Simulators extends Processors {
  /** Test helpers acting as shopper and clerk on a simulated terminal. */
  terminal: {
    presentCard(terminalId: string, cardNumber?: string, options?: { capture?: TerminalCapture; tip?: string | number }): Promise<void>;
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
  /** Ends what they still wait for (a shopper's timeout, a capture settling later): nothing of theirs keeps the process alive. */
  stop(): void;
}

/** A terminal's report cardflow could not record is sent again this many times (a minute: ./simulator/report-again.ts). */
const TERMINAL_REPORTS_AGAIN = 60;

/** Every option's name, once (a name missing or extra here does not compile). */
const SIMULATOR_OPTIONS = { clock: 1, ids: 1, captures: 1, captureSettleMs: 1, shopperTimeoutMs: 1, processorLatencyMs: 1, scripted: 1, side: 1 } satisfies Record<keyof SimulatorOptions, 1>;

/**
 * The processor simulators: the returned object is itself the `Processors` to pass to
 * `createEngine({ processors: sims })`, with test helpers (`sims.terminal`, `sims.cardFor`).
 */
export function createSimulators(options: SimulatorOptions): Simulators {
  if (typeof options !== "object" || options === null) throw new TypeError("createSimulators: takes its options, { clock, ids } at least (createSimulators({ clock: systemClock, ids: randomIds() }))");
  checkOptions("createSimulators", options, Object.keys(SIMULATOR_OPTIONS));
  const { clock: given, ids, captures = "immediate", captureSettleMs = 1_000, shopperTimeoutMs = 120_000, processorLatencyMs = 0, scripted = true, side = memorySide() } = options;
  // every timer of theirs (a shopper's timeout, a capture settling later), so stop() ends them all
  const pending = new Set<() => void>();
  const clock: Clock = {
    now: () => given.now(),
    setTimer(ms, fn) {
      const cancel = given.setTimer(ms, () => (pending.delete(cancel), fn()));
      pending.add(cancel);
      return () => (pending.delete(cancel), cancel());
    },
  };
  const ledger = createLedger(side);
  let connected: ProcessorReport = async () => {
    throw new Error("simulators are not connected to an engine");
  };
  const report: ProcessorReport = (paymentId, event) => connected(paymentId, event);
  /**
   * A terminal's report cardflow could not record is sent again for a minute: the terminal took the
   * card, and the payment shows it once the store answers (the reconciler covers the rest).
   * Settlements make theirs again themselves, for as long as they are pending (./simulator/settlements.ts).
   */
  const resending: ProcessorReport = (paymentId, event) => reportAgainWhileUnavailable(clock, () => report(paymentId, event), TERMINAL_REPORTS_AGAIN);
  const once = createOnce({ ledger, side, clock, scripted, processorLatencyMs });
  const settlements = createSettlements({ side, clock, captureSettleMs, report });
  const { outcome, requestsCapture } = createScriptedOutcomes({ side, ids, scripted, captures, settleLater: settlements.settleLater });
  const terminals = createTerminalSessions({ side, ledger, clock, shopperTimeoutMs, report: resending, outcome });
  const vault = createCardVault({ side, ids });

  function port(): ProcessorPort {
    return {
      chargeStoredCard: ({ payment, key }) =>
        once(
          key,
          // automatic stored-card charges capture in the same step (spec §3)
          async () => ({ call: "authorize", outcome: outcome(payment, testCardOf(vault.numberCharged(payment)), "card_not_present", "on_terminal"), amount: payment.intent.amount }),
          (r) => as("authorize")(r).outcome,
        ),

      startTerminalAuthorization: (req) =>
        once(
          req.key,
          () => terminals.start(req),
          () => undefined,
          0, // the terminal starts at once; the shopper takes the time
        ),

      async cancelTerminalAuthorization(req) {
        terminals.stop(req);
      },

      async readCardFromClient({ payment, card_number }) {
        const test = testCardOf(card_number);
        side.set("cards", payment.intent.payment_id, test.number);
        return { ...test.card, type: payment.intent.payment_method_types === "card_present" ? "card_present" : "card_not_present" };
      },

      authorizeCollectedCard: ({ payment, key }) =>
        once(
          key,
          async () => {
            const number = side.get<string>("cards", payment.intent.payment_id) ?? DEFAULT_TEST_CARD;
            return { call: "authorize", outcome: outcome(payment, testCardOf(number), payment.card?.type ?? "card_present", "separately"), amount: payment.intent.amount };
          },
          (r) => as("authorize")(r).outcome,
        ),

      capture: ({ payment, amount, key }) =>
        once(
          key,
          async () => {
            if (requestsCapture(payment)) {
              settlements.settleLater(payment.intent.payment_id, amount);
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
          async () => ({ call: "save_card", payment_method_id: vault.save(payment, external_customer_id) }),
          (r) => ({ payment_method_id: as("save_card")(r).payment_method_id }),
        ),

      lookup: async (key) => ledger.get(key) ?? "never_received",

      retrieveStoredCard: async (req) => vault.retrieve(req),
    };
  }

  const ports = { A: port(), B: port() };

  return {
    get: (processor) => ports[processor],
    connect(r) {
      connected = r;
      settlements.resume();
    },
    cardFor(number, type) {
      return cardFor(number, type);
    },
    ledger,
    terminal: terminals.helpers,
    stop() {
      for (const cancel of [...pending]) cancel();
      pending.clear();
    },
  };
}
