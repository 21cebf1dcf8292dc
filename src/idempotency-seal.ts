// Idempotency-Key answers are kept sealed (AES-256-GCM), since some carry a secret (an endpoint's
// `secret`, an intent's `client_secret`), under a key every process sharing the signing key derives.
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { Conflict } from "./errors.js";

/** A stored answer, sealed: `{ "sealed": "<base64url iv | ciphertext | tag>" }`. */
interface Sealed {
  sealed: string;
}

/** Seals and opens answers; records written before sealing (plain bodies) open as they are. */
export function answerSeal(key: Buffer) {
  return {
    seal(body: unknown): Sealed | null {
      if (body === null) return null;
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      const sealed = Buffer.concat([cipher.update(JSON.stringify(body), "utf8"), cipher.final()]);
      return { sealed: Buffer.concat([iv, sealed, cipher.getAuthTag()]).toString("base64url") };
    },
    open(body: unknown): unknown {
      const sealed = (body as Partial<Sealed> | null)?.sealed;
      if (body === null || typeof sealed !== "string" || Object.keys(body as object).length !== 1) return body;
      const raw = Buffer.from(sealed, "base64url");
      const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, 12));
      decipher.setAuthTag(raw.subarray(raw.length - 16));
      try {
        return JSON.parse(Buffer.concat([decipher.update(raw.subarray(12, raw.length - 16)), decipher.final()]).toString("utf8"));
      } catch {
        // the webhook signing key changed since (docs/OPERATIONS.md, key rotation): the first answer
        // cannot be given again; its effect stands, and running the request again could repeat it
        throw new Conflict(
          "the first answer to this Idempotency-Key was sealed under a key this process does not have (the server: WEBHOOK_SIGNING_KEY changed; a library caller: createIdempotency's sealKey differs, or was not given, in the process that answered it): what that request did stands; read the result (GET the payment or the list) rather than retrying it",
          "idempotency_answer_unreadable",
          "Idempotency-Key",
        );
      }
    },
  };
}
