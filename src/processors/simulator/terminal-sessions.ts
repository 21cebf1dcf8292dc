// Processor A's terminals: a collection in progress is a session on the processor's side (any
// process may end it: the shopper presents a card, the clerk cancels, the shopper times out, the
// engine stops it). Its outcome is recorded under the key the engine started it with.
import type { Clock } from "../../clock.js";
import { Conflict, InvalidRequest } from "../../errors.js";
import { maxAmount, minorUnits, parseAmount, type Decimal } from "../../money.js";
import type { Ledger, LedgerEntry } from "../ledger.js";
import type { ProcessorSide } from "../processor-side.js";
import type { AuthorizationOutcome, PaymentView, ProcessorReport } from "../port.js";
import { DEFAULT_TEST_CARD } from "../test-cards.js";
import { testCardOf, type ScriptedOutcomes, type TerminalCapture } from "./scripted-outcomes.js";

/** A terminal's collection in progress. */
interface Session {
  payment: PaymentView;
  /** The key the engine started the collection with: its outcome is recorded under it. */
  key: string;
}

const CANCELED_BY_POS: AuthorizationOutcome = { kind: "failed", last_error: "Canceled by clerk", last_error_code: "POS_CANCEL" };
const SHOPPER_TIMEOUT: AuthorizationOutcome = { kind: "failed", last_error: "Timed out waiting for shopper", last_error_code: "USER_TIMEOUT" };

interface Deps {
  side: ProcessorSide;
  ledger: Ledger;
  clock: Clock;
  shopperTimeoutMs: number;
  report: ProcessorReport;
  outcome: ScriptedOutcomes["outcome"];
}

/** A terminal asked to act on a collection it does not run (never started, or ended meanwhile: a cancel, another presentation). */
export const notCollecting = (terminalId: string) => new Conflict(`terminal ${terminalId} is not collecting a payment`, "terminal_idle");

export function createTerminalSessions({ side, ledger, clock, shopperTimeoutMs, report, outcome }: Deps) {
  const collectingWaiters = new Map<string, ((paymentId: string) => void)[]>();
  /** This process's shopper timeouts, by terminal (the collection itself is on the processor's side). */
  const timeouts = new Map<string, () => void>();
  const collectingFor = (terminalId: string) => side.get<Session>("sessions", terminalId)?.payment.intent.payment_id;

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

  /** The terminal starts asking the shopper for the card (a busy terminal refuses). */
  async function start({ payment, terminal, key }: { payment: PaymentView; terminal: { terminal_id: string }; key: string }): Promise<LedgerEntry> {
    const paymentId = payment.intent.payment_id;
    side.change<Session>("sessions", terminal.terminal_id, (busy) => {
      if (busy && busy.payment.intent.payment_id !== paymentId) {
        throw new Conflict(`terminal ${terminal.terminal_id} is busy collecting another payment`, "terminal_busy", "terminal_id");
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
  }

  /** The engine stops the payment's collection (another payment's is left alone). */
  function stop({ payment, terminal_id }: { payment: PaymentView; terminal_id: string }) {
    endSession(terminal_id, CANCELED_BY_POS, (s) => s.payment.intent.payment_id === payment.intent.payment_id);
  }

  /** Test helpers acting as shopper and clerk on a simulated terminal. */
  const helpers = {
    async presentCard(terminalId: string, cardNumber = DEFAULT_TEST_CARD, { capture = "separately", tip }: { capture?: TerminalCapture; tip?: string | number } = {}) {
      const session = side.get<Session>("sessions", terminalId);
      if (!session) throw notCollecting(terminalId);
      const tipAmount = tip === undefined ? undefined : checkTip(tip, session.payment.intent);
      const test = testCardOf(cardNumber); // an unknown card is refused and the terminal keeps collecting
      const paymentId = session.payment.intent.payment_id;
      side.set("cards", paymentId, test.number);
      const result = outcome(session.payment, test, "card_present", capture, tipAmount);
      // the shopper presents once: of two presentations at once (two processes), one ends it
      if (!endSession(terminalId, result, (s) => s.key === session.key)) throw notCollecting(terminalId);
      await report(paymentId, result);
    },
    async clerkCancel(terminalId: string) {
      const session = endSession(terminalId, CANCELED_BY_POS);
      if (!session) throw notCollecting(terminalId);
      await report(session.payment.intent.payment_id, CANCELED_BY_POS);
    },
    /** The payment a terminal is collecting for, if any. */
    collecting: collectingFor,
    /** Resolves with the payment id once the terminal is collecting (a blocking auth has reached it). */
    untilCollecting(terminalId: string): Promise<string> {
      const current = collectingFor(terminalId);
      if (current) return Promise.resolve(current);
      return new Promise((resolve) => collectingWaiters.set(terminalId, [...(collectingWaiters.get(terminalId) ?? []), resolve]));
    },
  };

  return { start, stop, helpers };
}

/**
 * A tip the shopper adds: an amount in the payment's currency (a number or a decimal string, as
 * every amount) that keeps the authorized total within the bound every later step (capture,
 * refund) carries; answered as a decimal string.
 */
function checkTip(tip: string | number, { amount, currency }: PaymentView["intent"]): string | undefined {
  // the shopper declined to tip (a terminal's "no tip"): 0 written as an amount of the currency is no tip
  const units = minorUnits(currency) ?? 2;
  if (tip === 0 || tip === "0" || (typeof tip === "string" && units > 0 && new RegExp(`^0\\.0{1,${units}}$`).test(tip))) return undefined;
  let parsed: Decimal;
  try {
    parsed = parseAmount(tip, currency);
  } catch (error) {
    throw new InvalidRequest(`tip: ${(error as Error).message}`, "tip", "amount_invalid");
  }
  if (parsed.plus(amount).greaterThan(maxAmount(currency))) throw new InvalidRequest(`tip: the amount with the tip must be at most ${maxAmount(currency)} ${currency}`, "tip", "amount_invalid");
  return parsed.toFixed();
}
