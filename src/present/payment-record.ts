// The payment record of spec §2.1, presented from the machine's state: status is the machine's
// state, amounts are the context's, written with the currency's minor units. Every surface (the
// library's answers, HTTP, webhooks, the console, the CLI, the audit) presents payments with it.
import type { Card } from "../../machines/events.js";
import type { PaymentState } from "../../machines/fold.js";
import type { PaymentStatus } from "../../machines/payment.js";
import { RECORD_RULES } from "../events/envelope.js";
import { amounts, formatAmount } from "../money.js";

export interface PaymentCardObject {
  type: Card["type"];
  brand: string;
  last_4: string;
  exp_month: string;
  exp_year: number;
  cardholder_name: string | null;
  receipt_data: null;
  payment_method_id: string | null;
}

export interface PaymentRecord {
  payment_id: string;
  date_created: string;
  external_transaction_id: string | number | null;
  status: PaymentStatus;
  amount: string;
  amount_authorized: string;
  amount_captured: string;
  amount_capturable: string;
  amount_refunded: string;
  amount_refundable: string;
  tip_amount: string;
  donation_amount: string;
  currency: string;
  card_present: boolean;
  payment_method_id: string | null;
  notes: null;
  authorization_code: string | null;
  processor: string;
  funding_source: string | null;
  payment?: PaymentCardObject;
  avs_response_code?: number;
  avs_response_message?: string;
  request_id: number;
  last_error?: string;
  last_error_code?: string;
  // extensions beyond §2.1, documented in the README
  external_account_id: string;
  external_customer_id: string | null;
  capture_method: "automatic" | "manual";
  payment_method_types: "card_present" | "card";
  terminal_id: string | null;
}

/** The answer to creating an intent: its record, and the client secret shown this once (null when no client SDK collects). */
export type CreatedIntent = PaymentRecord & { client_secret: string | null };

/** The record of a payment as of one of its events: its state then, and the request that appended that event. */
export const recordOf = (asOf: { state: PaymentState; request_id: number }): PaymentRecord => paymentRecord(asOf.state, asOf.request_id);

/**
 * The record of a created payment (status is never `none`), by today's rules or, for a public event
 * or an as-of view, by the rules its event was appended under (RECORD_RULES).
 */
export function paymentRecord(state: PaymentState, requestId: number, rules: number = RECORD_RULES): PaymentRecord {
  const { context } = state;
  const intent = context.intent;
  if (!intent || state.status === "none") throw new Error("no payment record before PaymentIntentCreated");
  const money = (v: string | number) => formatAmount(v, intent.currency);
  const authorization = context.authorization;
  const card = context.card;
  const payment_method_id = context.saved_card?.payment_method_id ?? intent.payment_method_id;
  // spec §3: a capture answered `capture_requested` has captured its amount (the processor settles
  // it later; a refund waits for that): the machine keeps it apart until then. Rules 1 showed 0.
  const captured = rules >= 2 ? money(amounts.sum(context.amount_captured, context.amount_capture_requested)) : context.amount_captured;

  const record: PaymentRecord = {
    payment_id: intent.payment_id,
    date_created: intent.date_created,
    external_transaction_id: intent.external_transaction_id,
    status: state.status,
    amount: intent.amount,
    amount_authorized: context.amount_authorized,
    amount_captured: captured,
    amount_capturable: context.amount_capturable,
    amount_refunded: context.amount_refunded,
    amount_refundable: money(amounts.difference(captured, context.amount_refunded)),
    tip_amount: authorization?.tip_amount ?? money(0),
    donation_amount: authorization?.donation_amount ?? money(0),
    currency: intent.currency,
    card_present: intent.payment_method_types === "card_present",
    payment_method_id,
    notes: null,
    authorization_code: authorization?.authorization_code ?? null,
    processor: context.processor ?? intent.processor,
    funding_source: card?.funding ?? null,
    request_id: requestId,
    external_account_id: intent.external_account_id,
    external_customer_id: context.saved_card?.external_customer_id ?? intent.external_customer_id,
    capture_method: intent.capture_method,
    payment_method_types: intent.payment_method_types,
    terminal_id: context.terminal?.terminal_id ?? null,
  };
  if (card) {
    record.payment = {
      type: card.type,
      brand: card.brand,
      last_4: card.last_4,
      exp_month: card.exp_month,
      exp_year: card.exp_year,
      cardholder_name: card.cardholder_name,
      receipt_data: null,
      payment_method_id,
    };
  }
  if (authorization?.avs_response_code != null) record.avs_response_code = authorization.avs_response_code;
  if (authorization?.avs_response_message != null) record.avs_response_message = authorization.avs_response_message;
  if (context.last_error !== null) record.last_error = context.last_error;
  if (context.last_error_code !== null) record.last_error_code = context.last_error_code;
  return record;
}
