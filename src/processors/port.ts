// The processor port: what the engine needs from a card processor. A real adapter implements
// it; cardflow ships deterministic simulators (./simulator.ts). Outcomes that arrive later (a
// terminal collecting the card, a capture settling) are reported back through `ProcessorReport`
// and become events on the payment's stream.
import type { Authorization, Card, Processor, TerminalType } from "../../machines/events.js";
import type { LastErrorCode } from "../../machines/failures.js";
import type { PaymentContext } from "../../machines/payment.js";

/** What a processor sees of a payment: the machine's context (read-only). */
export type PaymentView = Readonly<PaymentContext> & { intent: NonNullable<PaymentContext["intent"]> };

export interface TerminalView {
  terminal_id: string;
  external_account_id: string;
  terminal_type: TerminalType;
}

export type AuthorizationOutcome =
  | { kind: "authorized"; authorization: Authorization }
  /** Authorized and captured in one step (automatic capture). */
  | { kind: "captured"; authorization: Authorization }
  /** Authorized; the capture was submitted and settles later (reported as capture_settled). */
  | { kind: "capture_requested"; authorization: Authorization }
  | { kind: "failed"; last_error: string; last_error_code: LastErrorCode | null };

export type CaptureOutcome = { kind: "captured" } | { kind: "capture_requested" };

/**
 * What the processor recorded for one call, by its idempotency key (the attempt id): the answer
 * it gave, so an answer lost in a crash can be found again (ProcessorPort.lookup).
 */
export type RecordedOutcome =
  | { call: "authorize"; outcome: AuthorizationOutcome }
  /** The terminal started collecting; its outcome once the shopper paid, canceled or timed out (null: still collecting). */
  | { call: "start_terminal"; outcome: AuthorizationOutcome | null }
  | { call: "capture"; outcome: CaptureOutcome }
  | { call: "void" }
  | { call: "refund"; refund_id: string }
  | { call: "save_card"; payment_method_id: string }
  /** The processor refused the call without acting (a busy terminal, a card that cannot be saved). */
  | { call: "refused"; code: string; message: string };

/** Reported asynchronously by a processor about one payment. */
export type ProcessorEvent = AuthorizationOutcome | { kind: "capture_settled"; amount: string };

export type ProcessorReport = (paymentId: string, event: ProcessorEvent) => Promise<void>;

/**
 * Every call that moves money or changes a card carries `key`, the id of the attempt the engine
 * recorded before calling: a processor must not act twice for one key, and answers lookup(key).
 * A CardflowError thrown by a call is the processor's answer that it did nothing (a refusal);
 * anything else (a timeout, a lost connection) leaves the outcome unknown until lookup() tells it.
 */
export interface ProcessorPort {
  /** Card not present: charge a card on file; the outcome is the answer. */
  chargeStoredCard(req: { payment: PaymentView; key: string }): Promise<AuthorizationOutcome>;
  /**
   * Card present: the terminal starts asking the shopper for the card and the call returns; the
   * outcome is reported later. Throws Conflict("terminal_busy") when the terminal is collecting.
   */
  startTerminalAuthorization(req: { payment: PaymentView; terminal: TerminalView; key: string }): Promise<void>;
  /** Stops a terminal that is collecting for this payment (no report follows). */
  cancelTerminalAuthorization(req: { payment: PaymentView; terminal_id: string }): Promise<void>;
  /**
   * Processor B: the client SDK hands the card it read to the processor (card data never passes
   * through cardflow in a real integration); the processor answers with the card's details.
   */
  readCardFromClient(req: { payment: PaymentView; card_number: string }): Promise<Card>;
  /** Processor B: authorizes the card the client SDK collected; the outcome is the answer. */
  authorizeCollectedCard(req: { payment: PaymentView; key: string }): Promise<AuthorizationOutcome>;
  capture(req: { payment: PaymentView; amount: string; key: string }): Promise<CaptureOutcome>;
  /** Releases an authorization (cancel before capture). */
  void(req: { payment: PaymentView; key: string }): Promise<void>;
  refund(req: { payment: PaymentView; amount: string; key: string }): Promise<{ refund_id: string }>;
  /** Vaults the payment's card for the customer; refuses (ProcessorRefused) a card that cannot be saved. */
  saveCard(req: { payment: PaymentView; external_customer_id: string; key: string }): Promise<{ payment_method_id: string }>;
  /**
   * What the processor recorded for the call with this idempotency key, or "never_received" when
   * no call with it reached the processor (then nothing was done and the call may be made again).
   */
  lookup(key: string): Promise<RecordedOutcome | "never_received">;
  /**
   * A card on file the processor knows by token, for this account and customer (its vault: only the
   * customer it was saved for; or a sandbox test token, anyone's), or undefined.
   */
  retrieveStoredCard(req: { external_account_id: string; external_customer_id: string; payment_method_id: string }): Promise<Card | undefined>;
}

/** The processors the engine talks to, by name, and how they report back. */
export interface Processors {
  get(processor: Processor): ProcessorPort;
  /** Called once by the engine with the function that records reported outcomes. */
  connect(report: ProcessorReport): void;
}

/** Every processor a payment can be routed to (terminal types and account processors). */
export const ROUTED_PROCESSORS: readonly Processor[] = ["A", "B"];
const PORT_METHODS = [
  "chargeStoredCard", "startTerminalAuthorization", "cancelTerminalAuthorization", "readCardFromClient", "authorizeCollectedCard",
  "capture", "void", "refund", "saveCard", "lookup", "retrieveStoredCard",
] as const satisfies readonly (keyof ProcessorPort)[];

/**
 * What is wrong with the ports `portOf` gives, said at once (a wiring mistake, not later a processor
 * that "did not answer"): a routed processor without one, or one lacking a call. Undefined: none.
 */
export function portsProblem(portOf: (processor: Processor) => unknown): string | undefined {
  const missing = ROUTED_PROCESSORS.filter((p) => typeof portOf(p) !== "object" || portOf(p) === null);
  if (missing.length) return `no adapter for processor ${missing.join(" and ")}; cardflow routes payments to ${ROUTED_PROCESSORS.join(" and ")} (terminal types, account processors), so each needs one`;
  for (const p of ROUTED_PROCESSORS) {
    const lacking = PORT_METHODS.filter((m) => typeof (portOf(p) as Record<string, unknown>)[m] !== "function");
    if (lacking.length) return `the adapter for processor ${p} lacks ${lacking.join(", ")} (the ProcessorPort of src/processors/port.ts)`;
  }
  return undefined;
}
