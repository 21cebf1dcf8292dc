// Feed cursors: the feed position, sealed and bound to one account (src/cursors.ts), under a key
// derived from the signing key, so every process of a deployment reads the others' cursors. "0",
// the beginning, is the one cursor in the clear. Release 0.1.0 gave the position itself ("162"):
// such a cursor, saved by a consumer before the upgrade, is still read (it tells nothing the
// consumer did not have, and the feed it reads is the caller's own account's).
import { sealedCursors } from "../cursors.js";
import { InvalidRequest } from "../errors.js";

const BEGINNING = "0";
/** A cursor as release 0.1.0 wrote it: the log position, in digits (no sign, no leading zero). */
const RELEASE_0_1_0 = /^[1-9][0-9]{0,15}$/;

/**
 * Whether a cursor is one release 0.1.0 gave: not sealed, so it may name any position, the log's
 * end or past it (the feed reads it as its scope's last entry at or before it: ./feed.ts resumeAt).
 */
export const fromRelease010 = (cursor: string | undefined): cursor is string => cursor !== undefined && RELEASE_0_1_0.test(cursor);

export interface CursorCodec {
  /** The cursor that continues after `position` in this account's feed. */
  encode(account: string, position: number): string;
  /** The position a cursor of this account stands for; absent or "0": the beginning. Throws a 400 naming `after`. */
  decode(account: string, cursor: string | undefined): number;
}

export function cursorCodec(key: Buffer): CursorCodec {
  const sealed = sealedCursors(key, "cur_");
  const refuse = () => new InvalidRequest("after: not a cursor of this account's feed; pass a next_cursor this endpoint returned, or 0 for the beginning of the feed", "after", "cursor_invalid");
  return {
    encode(account, position) {
      if (position === 0) return BEGINNING;
      const place = Buffer.alloc(8);
      place.writeBigUInt64BE(BigInt(position));
      return sealed.seal(account, place);
    },
    decode(account, cursor) {
      if (cursor === undefined || cursor === BEGINNING) return 0;
      if (fromRelease010(cursor) && Number(cursor) <= Number.MAX_SAFE_INTEGER) return Number(cursor);
      const place = sealed.open(account, cursor);
      if (place?.length !== 8) throw refuse();
      const position = place.readBigUInt64BE();
      if (position > BigInt(Number.MAX_SAFE_INTEGER)) throw refuse();
      return Number(position);
    },
  };
}
