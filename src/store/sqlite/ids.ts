// Named sequences in the events' file: one upsert reserves a range.
import type Database from "better-sqlite3";
import type { IdSequences } from "../port/ids.js";
import type { Write } from "./open.js";

export function sqliteSequences(db: Database.Database, write: Write): IdSequences {
  const reserve = db.prepare<[string, number, number], { next: number }>(
    "INSERT INTO sequences (name, next) VALUES (?, 1 + ?) ON CONFLICT (name) DO UPDATE SET next = next + ? RETURNING next",
  );
  return {
    async reserveIds(sequence, count) {
      return (await write(() => reserve.get(sequence, count, count)!)).next - count;
    },
  };
}
