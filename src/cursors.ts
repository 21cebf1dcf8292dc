// Opaque cursors, bound to one account. A cursor is a place in a list sealed with AES-256-GCM
// under a key of the deployment, the account as associated data: a caller learns nothing from it
// (not the platform's event volume, not the list's internals), and another account's cursor, an
// edited one or one from another deployment opens to nothing, which the list refuses (400). The
// nonce is derived from (account, place), so one place has one cursor and no two places share a
// nonce.
import { createCipheriv, createDecipheriv, createHmac } from "node:crypto";

const IV = 12;
const TAG = 16;

export interface SealedCursors {
  /** The cursor standing for `place` in this account's list. */
  seal(account: string, place: Buffer): string;
  /** The place a cursor of this account stands for; undefined for anything else. */
  open(account: string, cursor: string): Buffer | undefined;
}

/** Cursors written `<prefix><base64url iv | sealed place | tag>`, sealed under `key` (32 bytes). */
export function sealedCursors(key: Buffer, prefix: string): SealedCursors {
  const aad = (account: string) => Buffer.from(account, "utf8");
  return {
    seal(account, place) {
      const iv = createHmac("sha256", key).update(aad(account)).update("\0").update(place).digest().subarray(0, IV);
      const cipher = createCipheriv("aes-256-gcm", key, iv).setAAD(aad(account));
      const sealed = Buffer.concat([cipher.update(place), cipher.final()]);
      return prefix + Buffer.concat([iv, sealed, cipher.getAuthTag()]).toString("base64url");
    },
    open(account, cursor) {
      if (!cursor.startsWith(prefix)) return undefined;
      const body = cursor.slice(prefix.length);
      const raw = Buffer.from(body, "base64url");
      if (raw.length < IV + TAG || raw.toString("base64url") !== body) return undefined;
      try {
        const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, IV)).setAAD(aad(account));
        decipher.setAuthTag(raw.subarray(raw.length - TAG));
        return Buffer.concat([decipher.update(raw.subarray(IV, raw.length - TAG)), decipher.final()]);
      } catch {
        return undefined; // another account's, edited, or another deployment's
      }
    },
  };
}
