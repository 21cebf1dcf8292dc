// Idempotency-Key records in the events' file. A claim is one INSERT … ON CONFLICT DO UPDATE …
// WHERE <the holder released the key>: the primary key refuses a second claimant.
import type Database from "better-sqlite3";
import type { IdempotencyRecord, IdempotencyStore } from "../port/idempotency.js";
import { KEEPS_KEY_SQL, RELEASED_SQL } from "../sql.js";
import type { Write } from "./open.js";

interface IdempotencyRow {
  key: string;
  fingerprint: string;
  token: string;
  state: string;
  status: number;
  body: string;
  expires_at: string;
}

const row = (r: IdempotencyRecord) => [r.key, r.fingerprint, r.token, r.state, r.status, JSON.stringify(r.body), r.expires_at] as const;
const fromRow = (r: IdempotencyRow): IdempotencyRecord => ({ ...r, state: r.state === "in_flight" ? "in_flight" : "done", body: JSON.parse(r.body) });

export interface SqliteIdempotency extends IdempotencyStore {
  /** Replaces the record of the same key and token, inside the caller's transaction; false when the key is no longer this token's. */
  replaceClaim(record: IdempotencyRecord): boolean;
}

export function sqliteIdempotency(db: Database.Database, write: Write): SqliteIdempotency {
  const q = {
    claim: db.prepare(
      `INSERT INTO idempotency (key, fingerprint, token, state, status, body, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (key) DO UPDATE SET fingerprint = excluded.fingerprint, token = excluded.token, state = excluded.state,
         status = excluded.status, body = excluded.body, expires_at = excluded.expires_at
       WHERE ${RELEASED_SQL("idempotency", "?")}`,
    ),
    save: db.prepare("UPDATE idempotency SET fingerprint = ?, state = ?, status = ?, body = ?, expires_at = ? WHERE key = ? AND token = ?"),
    dropClaim: db.prepare("DELETE FROM idempotency WHERE key = ? AND token = ? AND state = 'in_flight' AND status = 0"),
    endClaim: db.prepare("UPDATE idempotency SET state = 'done', expires_at = ? WHERE key = ? AND token = ? AND state = 'in_flight'"),
    read: db.prepare<[string], IdempotencyRow>("SELECT * FROM idempotency WHERE key = ?"),
    purge: db.prepare(`DELETE FROM idempotency WHERE ${RELEASED_SQL("idempotency", "?")}`),
    // the scope's keys are the primary key's range [scope + ":", scope + ";") (BINARY collation)
    count: db.prepare<[string, string, string], { n: number }>(`SELECT count(*) AS n FROM idempotency WHERE key >= ? AND key < ? AND ${KEEPS_KEY_SQL("idempotency", "?")}`),
    nextRelease: db.prepare<[string, string, string], { t: string | null }>(
      `SELECT min(expires_at) AS t FROM idempotency WHERE key >= ? AND key < ? AND expires_at >= ? AND state = 'done'`,
    ),
  };

  /** A write that may skip the fsync: were a claim lost, so would be everything written after it. */
  function withoutFsync<T>(work: () => T): T {
    db.pragma("synchronous = NORMAL");
    try {
      return work();
    } finally {
      db.pragma("synchronous = FULL");
    }
  }

  const replaceClaim = (r: IdempotencyRecord) => q.save.run(r.fingerprint, r.state, r.status, JSON.stringify(r.body), r.expires_at, r.key, r.token).changes > 0;

  return {
    replaceClaim,
    async claimIdempotency(claim, now) {
      for (;;) {
        const claimed = await write(() => withoutFsync(() => q.claim.run(...row(claim), now).changes > 0));
        if (claimed) return undefined;
        const held = q.read.get(claim.key);
        if (held) return fromRow(held);
        // released between the two statements: claim again
      }
    },
    async saveIdempotency(record) {
      return write(() => replaceClaim(record));
    },
    async releaseIdempotency(key, token, expires_at) {
      await write(() =>
        db
          .transaction(() => {
            q.dropClaim.run(key, token);
            q.endClaim.run(expires_at, key, token);
          })
          .immediate(),
      );
    },
    async readIdempotency(key) {
      const r = q.read.get(key);
      return r && fromRow(r);
    },
    async countIdempotency(scope, now) {
      return q.count.get(`${scope}:`, `${scope};`, now)!.n;
    },
    async nextIdempotencyRelease(scope, now) {
      return q.nextRelease.get(`${scope}:`, `${scope};`, now)!.t;
    },
    async purgeIdempotency(now) {
      return (await write(() => q.purge.run(now))).changes;
    },
  };
}
