// Reads of the events' file: a stream by revision, every stream after a position. Positions are
// the rowid, assigned inside the write transaction by SQLite's single writer (across processes
// too), so they commit in order and a reader never sees a gap that fills later.
import type Database from "better-sqlite3";
import type { RecordedEvent } from "../port/events.js";
import type { ReadAllOptions, ReadStreamOptions } from "../port/read.js";
import { streamRange, toRecorded, type EventRow } from "../sql.js";
import { LIMIT } from "./limit.js";

export function sqliteReads(db: Database.Database) {
  const q = {
    forwards: db.prepare<[string, number, number], EventRow>(`SELECT * FROM events WHERE stream = ? AND revision >= ? ORDER BY revision ${LIMIT}`),
    backwards: db.prepare<[string, number, number], EventRow>(`SELECT * FROM events WHERE stream = ? AND revision <= ? ORDER BY revision DESC ${LIMIT}`),
    all: db.prepare<[number, number], EventRow>(`SELECT * FROM events WHERE position > ? ORDER BY position ${LIMIT}`),
    head: db.prepare<[], number | null>("SELECT max(position) FROM events").pluck(),
  };
  const readAllSync = (after: number, maxCount: number): RecordedEvent[] => q.all.all(after, maxCount).map(toRecorded);
  return {
    readAllSync,
    async readStream(stream: string, options?: ReadStreamOptions) {
      const { forwards, from, maxCount } = streamRange(options);
      return (forwards ? q.forwards : q.backwards).all(stream, from, maxCount).map(toRecorded);
    },
    async readAll({ after = 0, maxCount = Number.MAX_SAFE_INTEGER }: ReadAllOptions = {}) {
      return readAllSync(after, maxCount);
    },
    async head() {
      return q.head.get() ?? 0;
    },
  };
}
