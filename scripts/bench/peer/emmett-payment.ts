// The stored-card payment written the idiomatic Emmett way, for the peer benchmark
// (scripts/bench/peer-emmett.ts): a decider per payment (decide / evolve / initialState) over the
// same events cardflow records (machines/events.ts: their types and data), the same money checks
// (decimal.js: an authorization must cover the intent, a capture is positive and at most what is
// authorized and not yet captured), and an application service that handles each command with
// Emmett's CommandHandler: read the stream, decide, append with the version it read as the
// expected one. The processor is cardflow's simulator, the one the engine calls in the same run.
//
// What it does not do that cardflow does (Emmett's way, not an omission of the peer): the attempt
// is appended with its outcome, after the processor call, in one commit per command, so a crash
// between the call and the append leaves no record of money the processor moved; no account
// lookup (currency and processor are the bench's constants); no hash chain, no payment machine.
import { CommandHandler, IllegalStateError, ValidationError, type Command, type Event, type EventStore } from "@event-driven-io/emmett";
import type { PaymentEventOf, PaymentEventType } from "../../../machines/events.js";
import { initialPaymentContext } from "../../../machines/payment.js";
import type { Clock } from "../../../src/clock.js";
import type { Ids } from "../../../src/ids.js";
import { Decimal, formatAmount, parseAmount } from "../../../src/money.js";
import type { AuthorizationOutcome, CaptureOutcome, PaymentView, ProcessorPort } from "../../../src/processors/port.js";

type Data<T extends PaymentEventType> = PaymentEventOf<T>["data"];
type Intent = Data<"PaymentIntentCreated">;

export type PaymentEvent =
  | Event<"PaymentIntentCreated", Intent>
  | Event<"AuthorizationAttempted", Data<"AuthorizationAttempted">>
  | Event<"PaymentAuthorized", Data<"PaymentAuthorized">>
  | Event<"AuthorizationFailed", Data<"AuthorizationFailed">>
  | Event<"CaptureAttempted", Data<"CaptureAttempted">>
  | Event<"PaymentCaptured", Data<"PaymentCaptured">>;

export type PaymentCommand =
  | Command<"CreatePaymentIntent", Intent>
  /** The processor's answer to the stored-card charge made under attempt_id. */
  | Command<"RecordAuthorization", { attempt_id: string; outcome: AuthorizationOutcome }>
  | Command<"RecordCapture", { attempt_id: string; amount: string; outcome: CaptureOutcome }>;

export type Payment =
  | { status: "none" }
  | {
      status: "requires_confirmation" | "requires_capture" | "succeeded" | "failed";
      intent: Intent;
      card: Intent["stored_card"];
      amount_authorized: string;
      amount_captured: string;
    };
type Existing = Exclude<Payment, { status: "none" }>;

export const initialState = (): Payment => ({ status: "none" });

export function evolve(state: Payment, event: PaymentEvent): Payment {
  if (event.type === "PaymentIntentCreated") {
    const intent = event.data;
    return { status: "requires_confirmation", intent, card: intent.stored_card, amount_authorized: "0", amount_captured: "0" };
  }
  if (state.status === "none") return state;
  switch (event.type) {
    case "PaymentAuthorized":
      return { ...state, status: "requires_capture", card: event.data.card, amount_authorized: event.data.amount_authorized };
    case "AuthorizationFailed":
      return { ...state, status: "failed" };
    case "PaymentCaptured":
      return { ...state, status: "succeeded", amount_captured: formatAmount(new Decimal(state.amount_captured).plus(event.data.amount), state.intent.currency) };
    default:
      return state; // attempts change nothing here: each is appended with its outcome
  }
}

function existing(state: Payment): Existing {
  if (state.status === "none") throw new IllegalStateError("payment not found");
  return state;
}

/** Checked before the processor is called, and again by decide. */
export function assertCanAuthorize(state: Payment): Existing {
  const payment = existing(state);
  if (payment.status !== "requires_confirmation") throw new IllegalStateError(`cannot authorize a payment in ${payment.status}`);
  return payment;
}

/** A capture takes a positive amount, at most what is authorized and not captured yet; returns it formatted. */
export function assertCanCapture(state: Payment, amount: string): string {
  const payment = existing(state);
  if (payment.status !== "requires_capture") throw new IllegalStateError(`cannot capture a payment in ${payment.status}`);
  const { currency } = payment.intent;
  const requested = parseAmount(amount, currency); // refuses what is not a positive amount of the currency
  const capturable = new Decimal(payment.amount_authorized).minus(payment.amount_captured);
  if (requested.greaterThan(capturable)) throw new ValidationError(`amount ${formatAmount(requested, currency)} exceeds the capturable ${formatAmount(capturable, currency)}`);
  return formatAmount(requested, currency);
}

export function decide(command: PaymentCommand, state: Payment): PaymentEvent[] {
  switch (command.type) {
    case "CreatePaymentIntent": {
      if (state.status !== "none") throw new IllegalStateError(`payment ${command.data.payment_id} exists`);
      const amount = parseAmount(command.data.amount, command.data.currency);
      return [{ type: "PaymentIntentCreated", data: { ...command.data, amount: formatAmount(amount, command.data.currency) } }];
    }
    case "RecordAuthorization": {
      const payment = assertCanAuthorize(state);
      const { attempt_id, outcome } = command.data;
      const attempted: PaymentEvent = { type: "AuthorizationAttempted", data: { attempt_id, amount: payment.intent.amount } };
      if (outcome.kind === "failed") return [attempted, { type: "AuthorizationFailed", data: { last_error: outcome.last_error, last_error_code: outcome.last_error_code, attempt_id } }];
      if (outcome.kind !== "authorized") throw new IllegalStateError(`a manual-capture charge cannot be ${outcome.kind}`);
      const { authorization } = outcome;
      if (!new Decimal(authorization.amount_authorized).equals(payment.intent.amount)) {
        throw new ValidationError(`authorized ${authorization.amount_authorized}, the intent is for ${payment.intent.amount}`);
      }
      return [attempted, { type: "PaymentAuthorized", data: { ...authorization, attempt_id } }];
    }
    case "RecordCapture": {
      const amount = assertCanCapture(state, command.data.amount);
      const { attempt_id, outcome } = command.data;
      if (outcome.kind !== "captured") throw new IllegalStateError(`capture outcome ${outcome.kind} is not handled by the peer`);
      return [
        { type: "CaptureAttempted", data: { attempt_id, amount } },
        { type: "PaymentCaptured", data: { amount, authorization: null, attempt_id } },
      ];
    }
  }
}

/** What the processor port sees of a payment (cardflow's PaymentView, built from this state). */
const viewOf = (payment: Existing): PaymentView => ({
  ...initialPaymentContext,
  intent: payment.intent,
  processor: payment.intent.processor,
  card: payment.card,
  amount_authorized: payment.amount_authorized,
  amount_captured: payment.amount_captured,
});

export const streamOf = (paymentId: string) => `payment-${paymentId}`;

export interface StoredCardCharge {
  external_account_id: string;
  currency: string;
  amount: string;
  payment_method_id: string;
  external_customer_id: string;
}

/** The application service: one CommandHandler call (read, decide, append with the expected version) per command. */
export function emmettPayments({ eventStore, processor, ids, clock }: { eventStore: EventStore; processor: ProcessorPort; ids: Ids; clock: Clock }) {
  const handle = CommandHandler<Payment, PaymentEvent>({ evolve, initialState });
  return {
    async create(charge: StoredCardCharge): Promise<string> {
      const stored_card = await processor.retrieveStoredCard({ external_account_id: charge.external_account_id, external_customer_id: charge.external_customer_id, payment_method_id: charge.payment_method_id });
      if (!stored_card) throw new ValidationError(`no card ${charge.payment_method_id} on file`);
      const payment_id = ids.id("pi");
      const data: Intent = {
        payment_id,
        external_account_id: charge.external_account_id,
        amount: charge.amount,
        currency: charge.currency,
        payment_method_types: "card",
        capture_method: "manual",
        processor: "B",
        external_transaction_id: null,
        external_customer_id: charge.external_customer_id,
        payment_method_id: charge.payment_method_id,
        stored_card,
        allow_saving_card: null, // not sent, as cardflow records a create without it
        client_secret: null,
        client_secret_sha256: null,
        date_created: new Date(clock.now()).toISOString(),
      };
      await handle(eventStore, streamOf(payment_id), (state) => decide({ type: "CreatePaymentIntent", data }, state));
      return payment_id;
    },

    async authorize(paymentId: string): Promise<Payment> {
      const { newState } = await handle(eventStore, streamOf(paymentId), async (state) => {
        const payment = assertCanAuthorize(state);
        const attempt_id = ids.id("att");
        const outcome = await processor.chargeStoredCard({ payment: viewOf(payment), key: attempt_id });
        return decide({ type: "RecordAuthorization", data: { attempt_id, outcome } }, state);
      });
      return newState;
    },

    async capture(paymentId: string, amount: string): Promise<Payment> {
      const { newState } = await handle(eventStore, streamOf(paymentId), async (state) => {
        const checked = assertCanCapture(state, amount);
        const attempt_id = ids.id("att");
        const outcome = await processor.capture({ payment: viewOf(existing(state)), amount: checked, key: attempt_id });
        return decide({ type: "RecordCapture", data: { attempt_id, amount: checked, outcome } }, state);
      });
      return newState;
    },
  };
}
