// What each API version writes for a payment: the same record, with the final success status
// written `success` by /v1 and `succeeded` by /v2 (spec §3 and §9; DESIGN.md).
import type { PaymentDoc } from "../../projections/payments.js";
import { recordOf, type CreatedIntent, type PaymentRecord } from "./payment-record.js";

export type Version = "v1" | "v2";

/** §3: one machine state `succeeded`, written `success` by /v1 and `succeeded` by /v2 (DESIGN.md). */
export const successStatus = (version: Version) => (version === "v1" ? "success" : "succeeded");

const statusIn = (status: string, version: Version) => (status === "succeeded" ? successStatus(version) : status);

export function presentPayment(record: PaymentRecord, version: Version) {
  const status = statusIn(record.status, version);
  // records are not changed in place (the engine shares them), so an unchanged one is sent as it is
  return status === record.status ? record : { ...record, status };
}

const writtenOut = new WeakMap<PaymentDoc, string>();

/**
 * A stored payment's /v2 record as its JSON, the bytes the answer schema's serializer writes
 * (JSON.stringify's: src/http/serializer.ts). Written once per document: the read models hand out
 * the same frozen document while its stored text is unchanged (src/store/port/parsed-docs.ts), so
 * a list read again (an account's first page, a console polling it) presents only what changed.
 */
export function presentedJson(doc: PaymentDoc): string {
  const known = writtenOut.get(doc);
  if (known !== undefined) return known;
  const json = JSON.stringify(presentPayment(recordOf(doc), "v2"));
  // only a frozen document cannot change under its memo
  if (Object.isFrozen(doc)) writtenOut.set(doc, json);
  return json;
}

/** Spec §4.3: the create response; `client_secret` only for intents a client SDK collects. */
export function presentCreated(created: CreatedIntent, version: Version) {
  const { payment_id, status, external_transaction_id, request_id, client_secret } = created;
  return {
    payment_id,
    status: statusIn(status, version),
    external_transaction_id,
    request_id,
    ...(client_secret === null ? {} : { client_secret }),
  };
}

/** What a client SDK holding the client secret sees of its intent (no merchant data). */
export function presentToClient(record: PaymentRecord) {
  const { payment_id, status, amount, currency, payment, last_error, last_error_code } = record;
  return { payment_id, status, amount, currency, ...(payment ? { payment } : {}), ...(last_error === undefined ? {} : { last_error }), ...(last_error_code === undefined ? {} : { last_error_code }) };
}
