// The client secret of an intent (processor B client SDK): `<payment_id>_secret_...`, shown once
// when the intent is created. The event keeps its SHA-256 (a random 190-bit token needs no slow
// hash); requests are checked by comparing digests in constant time, which also makes any input,
// multibyte characters included, compare as 32 bytes against 32 bytes.
import { createHash, timingSafeEqual } from "node:crypto";
import { Unauthorized } from "../errors.js";
import type { PaymentView } from "../processors/port.js";

export const secretDigest = (secret: string) => createHash("sha256").update(secret, "utf8").digest("hex");

// 401 whatever is wrong with it (unknown payment, wrong secret): a secret is a credential, and the
// answer must not tell a guesser whether the payment exists
export const unknownSecret = () => new Unauthorized("client_secret: not a valid client secret of this payment", "client_secret");

/** The payment a client secret names (its prefix); the secret itself is checked by requireSecret. */
export function paymentIdOfSecret(clientSecret: string): string {
  const at = clientSecret.indexOf("_secret_");
  if (at <= 0) throw unknownSecret();
  return clientSecret.slice(0, at);
}

export function requireSecret(payment: PaymentView, clientSecret: string): void {
  const { client_secret, client_secret_sha256 } = payment.intent;
  // streams written before digests were recorded hold the secret itself
  const expected = client_secret_sha256 ?? (client_secret === null ? null : secretDigest(client_secret));
  if (expected === null || !timingSafeEqual(Buffer.from(expected, "hex"), Buffer.from(secretDigest(clientSecret), "hex"))) throw unknownSecret();
}
