// Named sequences in the events' file: one upsert reserves a range.
import type Database from "better-sqlite3";
import type { IdSequences } from "../port/ids.js";
import type { Write } from "./open.js";

export function sqliteSequences(db: Database.Database, write: Write): IdSequences {
  const reserve = db.prepare<[string, number, number], { next: number }>(
    "INSERT INTO sequences (name, next) VALUES (?, 1 + ?) ON CONFLICT (name) DO UPDATE SET next = next + ? RETURNING next",
  );
  const read = db.prepare<[string], { next: number }>("SELECT next FROM sequences WHERE name = ?");
  return {
    async reserveIds(sequence, count) {
      if (count === 0) return read.get(sequence)?.next ?? 1;
      return (await write(() => reserve.get(sequence, count, count)!)).next - count;
    },
  };
}
