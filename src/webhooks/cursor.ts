// Feed cursors: opaque and bound to one account. A cursor is the feed position sealed with
// AES-256-GCM under a key derived from the signing key, the account as associated data: a caller
// learns nothing of the platform's event volume from it, and another account's cursor, an edited
// one or one from another deployment is refused (400) instead of read. The nonce is derived from
// (account, position), so one position has one cursor (the page and the stream hand out the same
// one) and no two positions share a nonce. "0", the beginning, is the one cursor in the clear.
import { createCipheriv, createDecipheriv, createHmac } from "node:crypto";
import { InvalidRequest } from "../errors.js";

const PREFIX = "cur_";
const BEGINNING = "0";
const IV = 12;
const TAG = 16;
const BODY = 8;

export interface CursorCodec {
  /** The cursor that continues after `position` in this account's feed. */
  encode(account: string, position: number): string;
  /** The position a cursor of this account stands for; absent or "0": the beginning. Throws a 400 naming `after`. */
  decode(account: string, cursor: string | undefined): number;
}

export function cursorCodec(key: Buffer): CursorCodec {
  const refuse = () => new InvalidRequest("after: not a cursor of this account's feed; pass a next_cursor this endpoint returned, or omit after to start from the beginning", "after", "cursor_invalid");
  return {
    encode(account, position) {
      if (position === 0) return BEGINNING;
      const iv = createHmac("sha256", key).update(`${account}\0${position}`).digest().subarray(0, IV);
      const cipher = createCipheriv("aes-256-gcm", key, iv).setAAD(Buffer.from(account, "utf8"));
      const plain = Buffer.alloc(BODY);
      plain.writeBigUInt64BE(BigInt(position));
      const sealed = Buffer.concat([cipher.update(plain), cipher.final()]);
      return PREFIX + Buffer.concat([iv, sealed, cipher.getAuthTag()]).toString("base64url");
    },
    decode(account, cursor) {
      if (cursor === undefined || cursor === BEGINNING) return 0;
      if (!cursor.startsWith(PREFIX)) throw refuse();
      const raw = Buffer.from(cursor.slice(PREFIX.length), "base64url");
      if (raw.length !== IV + BODY + TAG || raw.toString("base64url") !== cursor.slice(PREFIX.length)) throw refuse();
      try {
        const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, IV)).setAAD(Buffer.from(account, "utf8"));
        decipher.setAuthTag(raw.subarray(IV + BODY));
        const plain = Buffer.concat([decipher.update(raw.subarray(IV, IV + BODY)), decipher.final()]);
        const position = plain.readBigUInt64BE();
        if (position > BigInt(Number.MAX_SAFE_INTEGER)) throw refuse();
        return Number(position);
      } catch {
        throw refuse();
      }
    },
  };
}
