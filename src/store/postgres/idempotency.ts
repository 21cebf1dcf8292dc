// Idempotency-Key records. A claim is one INSERT … ON CONFLICT DO UPDATE … WHERE <the holder
// released the key>: the primary key refuses a second claimant, in any process. An append replaces
// the claim in its own statement (./append.ts: SQLSTATE CF002 when the claim was lost).
import type { IdempotencyRecord, IdempotencyStore } from "../port/idempotency.js";
import { KEEPS_KEY_SQL, RELEASED_SQL } from "../sql.js";
import type { Statements } from "./pool.js";

const COLUMNS = "key, fingerprint, token, state, status, body, expires_at";

export function postgresIdempotency({ run, query }: Statements): IdempotencyStore {
  async function readIdempotency(key: string): Promise<IdempotencyRecord | undefined> {
    const [r] = await query<IdempotencyRecord>(`SELECT ${COLUMNS} FROM idempotency WHERE key = $1`, [key]);
    return r;
  }
  return {
    async claimIdempotency(claim, now) {
      for (;;) {
        const claimed = await query(
          `INSERT INTO idempotency AS i (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)
           ON CONFLICT (key) DO UPDATE SET fingerprint = excluded.fingerprint, token = excluded.token, state = excluded.state,
             status = excluded.status, body = excluded.body, expires_at = excluded.expires_at
           WHERE ${RELEASED_SQL("i", "$8")}
           RETURNING key`,
          [claim.key, claim.fingerprint, claim.token, claim.state, claim.status, JSON.stringify(claim.body), claim.expires_at, now],
        );
        if (claimed.length > 0) return undefined;
        const held = await readIdempotency(claim.key);
        if (held) return held;
        // released between the two statements: claim again
      }
    },
    async saveIdempotency(r) {
      const { rowCount } = await run("UPDATE idempotency SET fingerprint = $1, state = $2, status = $3, body = $4, expires_at = $5 WHERE key = $6 AND token = $7", [
        r.fingerprint,
        r.state,
        r.status,
        JSON.stringify(r.body),
        r.expires_at,
        r.key,
        r.token,
      ]);
      return (rowCount ?? 0) > 0;
    },
    async releaseIdempotency(key, token, expires_at) {
      // One statement, atomic without BEGIN/COMMIT: a claim that recorded no answer is dropped, one
      // that did (its events were appended with it) is closed as it is. The two touch disjoint rows.
      await run(
        `WITH released AS (DELETE FROM idempotency WHERE key = $1 AND token = $2 AND state = 'in_flight' AND status = 0)
         UPDATE idempotency SET state = 'done', expires_at = $3 WHERE key = $1 AND token = $2 AND state = 'in_flight' AND status <> 0`,
        [key, token, expires_at],
        "cardflow_idempotency_release",
      );
    },
    readIdempotency,
    async countIdempotency(scope, now) {
      // the range on the "C" collation (byte order) is the scope's keys, served by idempotency_key_c (migration 008)
      const [r] = await query<{ n: string }>(
        `SELECT count(*) AS n FROM idempotency i WHERE (i.key COLLATE "C") >= $1 AND (i.key COLLATE "C") < $2 AND ${KEEPS_KEY_SQL("i", "$3")}`,
        [`${scope}:`, `${scope};`, now],
      );
      return Number(r!.n);
    },
    async nextIdempotencyRelease(scope, now) {
      const [r] = await query<{ t: string | null }>(
        `SELECT min(i.expires_at) AS t FROM idempotency i WHERE (i.key COLLATE "C") >= $1 AND (i.key COLLATE "C") < $2 AND i.expires_at >= $3 AND i.state = 'done'`,
        [`${scope}:`, `${scope};`, now],
      );
      return r!.t;
    },
    async purgeIdempotency(now) {
      return (await run(`DELETE FROM idempotency i WHERE ${RELEASED_SQL("i", "$1")}`, [now])).rowCount ?? 0;
    },
  };
}
