// The two files of a SQLite store: the events' file (events, idempotency records, sequences) and the
// read models' file next to it, and what opening does to bring an older layout to this one.
import type Database from "better-sqlite3";
import { extname } from "node:path";
import { underEventsLock } from "./open.js";
import { bootId, marksOf, settleUnsynced } from "./unsynced.js";

/** The read models' file of an events' file: `data/cardflow.sqlite` → `data/cardflow.read-models.sqlite`. */
export function readModelsPath(path: string): string {
  if (path === ":memory:") return path;
  const ext = extname(path);
  return `${path.slice(0, path.length - ext.length)}.read-models${ext}`;
}

/**
 * Files written before the read models had their own file keep them with the events: moved once,
 * documents and checkpoints together, under the events' write lock (one process moves them). A
 * crash after the copy and before the drop copies them again, over the first copy.
 */
export function moveReadModels(db: Database.Database, rm: Database.Database, busyTimeoutMs: number) {
  const present = db.prepare("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name IN ('read_models', 'checkpoints')").pluck();
  if (present.get() === 0) return;
  underEventsLock(db, [rm], busyTimeoutMs, () => {
    if (present.get() === 0) return;
    const putDoc = rm.prepare("INSERT INTO read_models (projection, key, doc) VALUES (?, ?, ?)");
    const putCheckpoint = rm.prepare("INSERT INTO checkpoints (projection, position) VALUES (?, ?)");
    rm.transaction(() => {
      rm.exec("DELETE FROM read_models; DELETE FROM checkpoints;");
      for (const d of db.prepare<[], { projection: string; key: string; doc: string }>("SELECT projection, key, doc FROM read_models").iterate()) putDoc.run(d.projection, d.key, d.doc);
      for (const c of db.prepare<[], { projection: string; position: number }>("SELECT projection, position FROM checkpoints").all()) putCheckpoint.run(c.projection, c.position);
    }).immediate();
    db.exec("DROP TABLE read_models; DROP TABLE checkpoints;");
  });
}

/**
 * Before the read models' file is opened: marks of bulk catch-ups left by another boot discard it
 * (it may be corrupt; the runner rebuilds it from the events), under the events' write lock so
 * that no other process opens it meanwhile (./unsynced.ts).
 */
export function settleReadModels(db: Database.Database, file: string, busyTimeoutMs: number) {
  if (file === ":memory:" || marksOf(file).length === 0) return;
  underEventsLock(db, [], busyTimeoutMs, () => void settleUnsynced(file, bootId()));
}
