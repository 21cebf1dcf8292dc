// Zod schemas of the API's answers, written from the spec (§2.1 payment record and its `payment`
// object, §4.3 create response) plus the documented extensions. They generate the OpenAPI
// document and are what the end-to-end tests check every answer against.
import { z } from "zod";
import { LAST_ERROR_CODES } from "../../machines/failures.js";
import { PAYMENT_STATUSES } from "../../machines/statuses.js";
import { Card, TerminalType } from "../../machines/events.js";

import { successStatus, type Version } from "../present/api-versions.js";

export type { Version } from "../present/api-versions.js";

/** §3: one machine state `succeeded`, written `success` by /v1 and `succeeded` by /v2 (DESIGN.md). */
const OTHER_STATUSES = PAYMENT_STATUSES.filter((s) => s !== "succeeded");
export const PaymentStatusOut = (version: Version) => z.enum([...OTHER_STATUSES, successStatus(version)]);

/** Amounts leave as strings with the currency's minor units (§2.1 allows string or number). */
const AmountOut = z.string().regex(/^\d+(\.\d+)?$/);
const TransactionRef = z.union([z.string(), z.number()]).nullable();

/** The `payment` object of §2.1: the card the processor reported, as the wire shows it. */
const { funding: _funding, ...cardFields } = Card.shape;
export const PaymentCardOut = z
  .strictObject({
    ...cardFields,
    receipt_data: z.null(),
    /** The card-on-file token; null while the card is not saved. */
    payment_method_id: z.string().nullable(),
  })
  .meta({ title: "PaymentCard" });

/** The full payment record of spec §2.1 (status read, auth, capture). */
export const PaymentRecordOut = (version: Version) =>
  z.strictObject({
    payment_id: z.string(),
    date_created: z.iso.datetime({ offset: true }),
    external_transaction_id: TransactionRef,
    status: PaymentStatusOut(version),
    amount: AmountOut,
    amount_authorized: AmountOut,
    amount_captured: AmountOut,
    amount_capturable: AmountOut,
    amount_refunded: AmountOut,
    amount_refundable: AmountOut,
    tip_amount: AmountOut,
    donation_amount: AmountOut,
    currency: z.string().regex(/^[A-Z]{3}$/),
    card_present: z.boolean(),
    payment_method_id: z.string().nullable(),
    notes: z.null(),
    authorization_code: z.string().nullable(),
    processor: z.string(),
    funding_source: z.string().nullable(),
    payment: PaymentCardOut.optional(),
    avs_response_code: z.number().int().optional(),
    avs_response_message: z.string().optional(),
    request_id: z.number().int().positive(),
    last_error: z.string().optional(),
    last_error_code: z.enum(LAST_ERROR_CODES).optional(),
    // extensions beyond §2.1
    external_account_id: z.string(),
    external_customer_id: z.string().nullable(),
    capture_method: z.enum(["automatic", "manual"]),
    payment_method_types: z.enum(["card_present", "card"]),
    terminal_id: z.string().nullable(),
  })
    .meta({ title: `PaymentRecord${version.toUpperCase()}` });

/** §4.3 create response; `client_secret` (extension) when a client SDK collects the card. */
export const CreatedIntentOut = (version: Version) =>
  z.strictObject({
    payment_id: z.string(),
    status: PaymentStatusOut(version),
    external_transaction_id: TransactionRef,
    request_id: z.number().int().positive(),
    client_secret: z.string().optional(),
  })
    .meta({ title: `CreatedIntent${version.toUpperCase()}` });

/** §2.2: `terminal_id`, plus what the service knows of the terminal. */
export const TerminalOut = z.strictObject({
  terminal_id: z.string(),
  external_account_id: z.string(),
  terminal_type: TerminalType,
  label: z.string().nullable(),
  serial_number: z.string().nullable(),
  date_created: z.iso.datetime({ offset: true }),
}).meta({ title: "Terminal" });
export const TerminalListOut = z.strictObject({ data: z.array(TerminalOut) });

/** §2.3 / §4.7: the card on file (its token is `payment_method_id`). */
export const CustomerCardOut = z.strictObject({
  payment_method_id: z.string(),
  external_account_id: z.string(),
  external_customer_id: z.string(),
  brand: z.string(),
  last_4: z.string().regex(/^\d{4}$/),
  exp_month: z.string().regex(/^(0[1-9]|1[0-2])$/),
  exp_year: z.number().int(),
  cardholder_name: z.string().nullable(),
  funding: z.string(),
  payment_id: z.string(),
  date_created: z.iso.datetime({ offset: true }),
}).meta({ title: "CustomerCard" });
export const CustomerCardListOut = z.strictObject({ data: z.array(CustomerCardOut) });

/** What the client secret lets a client SDK see of its intent. */
export const ClientIntentOut = z.strictObject({
  payment_id: z.string(),
  status: PaymentStatusOut("v2"),
  amount: AmountOut,
  currency: z.string(),
  payment: PaymentCardOut.optional(),
  /** Why the collect's processing failed (a decline), as the status read has them: absent when none. */
  last_error: z.string().optional(),
  last_error_code: z.string().optional(),
});

export const ProblemOut = z.object({
  type: z.string(),
  title: z.string(),
  status: z.number().int().min(400).max(599),
  detail: z.string(),
  code: z.string(),
  param: z.string().nullable(),
  request_id: z.number().int().positive(),
  current_status: z.string().optional(),
  allowed_next_steps: z.array(z.string()).optional(),
}).meta({ title: "Problem" });

export const HealthOut = z.strictObject({ status: z.literal("ok") });
