// Reads: a stream by revision, every stream in global order without gaps that fill later.
//
// A bigserial alone is allocated at insert time but becomes visible at commit time, so a reader
// could see position 7 before 6 commits and skip 6 for good. Each row therefore carries its
// transaction id (xid8), and readers only return rows whose transaction is older than the oldest
// one still running, pg_snapshot_xmin(...): such rows can no longer change. That alone is not
// enough when an older transaction holds a higher position than a younger one, so
// reserve_positions() (migration 1) takes the transaction id and the positions together under a
// short advisory lock: a transaction's positions are above those of every transaction with a
// smaller id. Hence once rows are visible, no row with a lower position can appear later. The lock
// covers one statement, not the commit, so commits stay concurrent. A transaction reserves
// positions once: a second reservation could come after a younger transaction's and sit above its
// positions. Cost: a transaction that stays open anywhere in the cluster holds subscribers back
// until it ends.
import type { RecordedEvent } from "../port/events.js";
import type { AllReader, ReadAllOptions, StreamReader } from "../port/read.js";
import { streamRange, toRecorded, type EventRow } from "../sql.js";
import type { Statements } from "./pool.js";

const COLUMNS = "position, stream, revision, id, type, version, data::text AS data, metadata::text AS metadata";

export function postgresReads({ query }: Statements): StreamReader & AllReader & { readAllVisible(after: number, maxCount: number): Promise<RecordedEvent[]> } {
  // Only rows of transactions older than every running one: they can no longer change (see top).
  const readAllVisible = async (after: number, maxCount: number) =>
    (
      await query<EventRow>(
        `SELECT ${COLUMNS} FROM events
         WHERE position > $1 AND tx < pg_snapshot_xmin(pg_current_snapshot())
         ORDER BY position LIMIT $2`,
        [after, maxCount],
        "cardflow_read_all",
      )
    ).map(toRecorded);

  return {
    readAllVisible,
    async readStream(stream, options) {
      const { forwards, from, maxCount } = streamRange(options);
      const range = forwards ? "revision >= $2 ORDER BY revision" : "revision <= $2 ORDER BY revision DESC";
      return (await query<EventRow>(`SELECT ${COLUMNS} FROM events WHERE stream = $1 AND ${range} LIMIT $3`, [stream, from, maxCount], `cardflow_read_stream_${forwards ? "f" : "b"}`)).map(
        toRecorded,
      );
    },
    async readAll({ after = 0, maxCount = Number.MAX_SAFE_INTEGER }: ReadAllOptions = {}) {
      return readAllVisible(after, maxCount);
    },
    // The last committed position, visible to readAll or not yet (an older transaction still open):
    // a reader waiting for it waits for that transaction too, which is what it must see.
    async head() {
      const [r] = await query<{ p: string }>("SELECT coalesce(max(position), 0) AS p FROM events", [], "cardflow_head");
      return Number(r!.p);
    },
  };
}
