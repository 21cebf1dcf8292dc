// What each API version writes for a payment: the same record, with the final success status
// written `success` by /v1 and `succeeded` by /v2 (spec §3 and §9; DESIGN.md).
import type { CreatedIntent, PaymentRecord } from "./payment-record.js";

export type Version = "v1" | "v2";

/** §3: one machine state `succeeded`, written `success` by /v1 and `succeeded` by /v2 (DESIGN.md). */
export const successStatus = (version: Version) => (version === "v1" ? "success" : "succeeded");

const statusIn = (status: string, version: Version) => (status === "succeeded" ? successStatus(version) : status);

export function presentPayment(record: PaymentRecord, version: Version) {
  const status = statusIn(record.status, version);
  // records are not changed in place (the engine shares them), so an unchanged one is sent as it is
  return status === record.status ? record : { ...record, status };
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
  const { payment_id, status, amount, currency, payment } = record;
  return { payment_id, status, amount, currency, ...(payment ? { payment } : {}) };
}
