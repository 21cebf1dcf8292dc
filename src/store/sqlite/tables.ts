// Table read models in the read models' file: `rm_<projection>`, a rowid table (documents are
// 1-3 KB: out of the key B-tree) with its key unique, its columns and its indexes; its version and
// shape in read_model_versions. A query is one statement through an index: equality columns, then
// a row-value keyset comparison on the order's columns (SQLite seeks the index to it) and LIMIT.
import type Database from "better-sqlite3";
import { checkQuery, checkShape, prefixRangeEnd, shapeText, type Columns, type Doc, type ReadModelShape, type TableQuery, type TableShape } from "../port/tables.js";
import { LIMIT } from "./limit.js";

const DOCUMENTS = shapeText({ version: 1 });
/** Writing documents: one statement, each document's parameters. */
export type Upsert = { sql: string; params: (key: string, doc: unknown, text: string, row?: Readonly<Record<string, unknown>>) => unknown[] };
const tableOf = (projection: string) => `rm_${projection}`;
/** The table's i-th secondary index (from 0, named from 1). */
const indexOf = (projection: string, i: number) => `${tableOf(projection)}_${i + 1}`;

export function sqliteTables(rm: Database.Database) {
  const q = {
    version: rm.prepare<[string], { version: number; shape: string }>("SELECT version, shape FROM read_model_versions WHERE projection = ?"),
    setVersion: rm.prepare("INSERT INTO read_model_versions (projection, version, shape) VALUES (?, ?, ?) ON CONFLICT (projection) DO UPDATE SET version = excluded.version, shape = excluded.shape"),
    dropDocs: rm.prepare("DELETE FROM read_models WHERE projection = ?"),
    dropCheckpoint: rm.prepare("DELETE FROM checkpoints WHERE projection = ?"),
  };
  /** Table read models known to this handle: their shape (prepared here: with row(); read from the file: columns only). */
  const known = new Map<string, { columns: string[]; fixed: string[]; table?: TableShape } | undefined>();
  const upserts = new Map<string, Upsert>();
  const statements = new Map<string, Database.Statement>();
  const statement = (sql: string) => {
    let s = statements.get(sql);
    if (!s) statements.set(sql, (s = rm.prepare(sql)));
    return s;
  };

  /** The table's shape if the projection is a table read model (looked up once per handle). */
  function shapeOf(projection: string) {
    if (known.has(projection)) return known.get(projection);
    const stored = q.version.get(projection);
    const parsed = stored && stored.shape !== DOCUMENTS ? (JSON.parse(stored.shape) as { columns: Record<string, string>; fixed: string[] }) : undefined;
    const shape = parsed && { columns: Object.keys(parsed.columns), fixed: parsed.fixed };
    known.set(projection, shape);
    return shape;
  }

  function create(projection: string, table: TableShape) {
    const columns = Object.entries(table.columns).map(([c, type]) => `, ${c} ${type === "text" ? "TEXT" : "INTEGER"}`);
    rm.exec(`CREATE TABLE ${tableOf(projection)} (key TEXT PRIMARY KEY, doc TEXT NOT NULL${columns.join("")})`);
    indexes(projection, table);
  }
  /** The table's indexes, made where missing (a bulk catch-up drops an empty table's: withoutIndexes). */
  function indexes(projection: string, table: TableShape) {
    table.indexes.forEach((index, i) => rm.exec(`CREATE INDEX IF NOT EXISTS ${indexOf(projection, i)} ON ${tableOf(projection)} (${index.join(", ")})`));
  }

  return {
    isTable: (projection: string) => shapeOf(projection) !== undefined,
    /** The table's shape, with row(), when prepared on this handle. */
    prepared: (projection: string) => known.get(projection)?.table,

    /**
     * Drops the secondary indexes of the empty tables prepared on this handle (those a catch-up from
     * zero fills: each row would otherwise go into every index in key order, page by random page, a
     * fifth of a rebuild's CPU) and answers the function that makes them again, sorted once.
     */
    withoutIndexes: rm.transaction((): (() => void) => {
      const bare = [...known].flatMap(([projection, shape]) => (shape?.table && statement(`SELECT 1 FROM ${tableOf(projection)} LIMIT 1`).get() === undefined ? [{ projection, table: shape.table }] : []));
      for (const { projection, table } of bare) table.indexes.forEach((_, i) => rm.exec(`DROP INDEX IF EXISTS ${indexOf(projection, i)}`));
      return rm.transaction(() => bare.forEach(({ projection, table }) => indexes(projection, table))).immediate;
    }).immediate,
    tableName: tableOf,

    /** Run inside an immediate transaction of the read models' file (under its write lock). */
    prepare(projection: string, shape: ReadModelShape): boolean {
      checkShape(projection, shape);
      const text = shapeText(shape);
      const stored = q.version.get(projection) ?? { version: 1, shape: DOCUMENTS };
      // a table dropped by hand (its rows gone, its checkpoint not) is built again from the events too
      const missing = shape.table !== undefined && rm.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?").pluck().get(tableOf(projection)) === 0;
      const changed = stored.version !== shape.version || stored.shape !== text || missing;
      if (changed) {
        rm.exec(`DROP TABLE IF EXISTS ${tableOf(projection)}`);
        q.dropDocs.run(projection);
        q.dropCheckpoint.run(projection);
        if (shape.table) create(projection, shape.table);
      }
      // an unchanged table's indexes too: a bulk catch-up that died before making them again left it without
      else if (shape.table) indexes(projection, shape.table);
      q.setVersion.run(projection, shape.version, text);
      const table = shape.table;
      known.set(projection, table && { columns: Object.keys(table.columns), fixed: [...(table.fixed ?? [])], table });
      upserts.delete(projection);
      return changed;
    },

    /** The upsert of a table read model's documents: its statement, and a document's parameters (`text`: its JSON). */
    upsert(projection: string): Upsert {
      const made = upserts.get(projection);
      if (made) return made;
      const shape = known.get(projection);
      if (!shape?.table) throw new Error(`read model ${projection} is a table: prepare() it on this handle before writing`);
      const { table, columns, fixed } = shape;
      const set = ["doc", ...columns.filter((c) => !fixed.includes(c))].map((c) => `${c} = excluded.${c}`);
      const upsert: Upsert = {
        sql: `INSERT INTO ${tableOf(projection)} (key, doc${columns.map((c) => `, ${c}`).join("")}) VALUES (?, ?${", ?".repeat(columns.length)})
         ON CONFLICT (key) DO UPDATE SET ${set.join(", ")}`,
        // row: the document's columns when the caller computed them already
        params(key, doc, text, row = table.row(doc)) {
          return [key, text, ...columns.map((c) => row[c] ?? null)];
        },
      };
      upserts.set(projection, upsert);
      return upsert;
    },
    /** Runs a statement once for each row of parameters (inside the caller's transaction). */
    runEach(sql: string, rows: readonly unknown[][]): void {
      const s = statement(sql);
      for (const row of rows) s.run(...row);
    },
    get: (projection: string, key: string) => statement(`SELECT doc FROM ${tableOf(projection)} WHERE key = ?`).pluck().get(key) as string | undefined,
    /** The stored columns (and key) of the rows among `keys` (a JSON array); none for documents. */
    columns(projection: string, keys: string): Columns[] {
      const shape = shapeOf(projection);
      if (!shape) return [];
      return statement(`SELECT key${shape.columns.map((c) => `, ${c}`).join("")} FROM ${tableOf(projection)} WHERE key IN (SELECT value FROM json_each(?))`).all(keys) as Columns[];
    },
    getMany: (projection: string, keys: string) => statement(`SELECT key, doc FROM ${tableOf(projection)} WHERE key IN (SELECT value FROM json_each(?))`).all(keys) as Doc[],
    list(projection: string, from: string, to: string | null, after: string, limit: number) {
      const upper = to === null ? "" : " AND key < ?";
      const sql = `SELECT key, doc FROM ${tableOf(projection)} WHERE key >= ?${upper} AND key > ? ORDER BY key ${LIMIT}`;
      return statement(sql).all(...(to === null ? [from, after, limit] : [from, to, after, limit])) as Doc[];
    },
    count: (projection: string) => statement(`SELECT count(*) FROM ${tableOf(projection)}`).pluck().get() as number,
    reset: (projection: string) => statement(`DELETE FROM ${tableOf(projection)}`).run(),

    query(projection: string, query: TableQuery): Doc[] {
      const shape = shapeOf(projection);
      if (!shape) throw new Error(`read model ${projection} is not a table`);
      checkQuery(projection, shape.columns, query);
      const where = Object.entries(query.where);
      const conditions: string[] = [];
      const values: unknown[] = [];
      const add = (condition: string, ...vs: unknown[]) => {
        conditions.push(condition);
        values.push(...vs);
      };
      for (const [c, v] of where) add(v === null ? `${c} IS NULL` : `${c} = ?`, ...(v === null ? [] : [v]));
      // a prefix: its range's lower bound (unless the keyset, past it, is the lower bound) and end
      const end = query.prefix && prefixRangeEnd(query.prefix.value);
      if (query.prefix && !query.after) add(`${query.prefix.column} >= ?`, query.prefix.value);
      if (query.prefix && end !== null) add(`${query.prefix.column} < ?`, end);
      if (query.after) add(`(${query.order.join(", ")}) ${query.direction === "desc" ? "<" : ">"} (${query.order.map(() => "?").join(", ")})`, ...query.after);
      const direction = query.direction === "desc" ? " DESC" : "";
      const sql = `SELECT key, doc FROM ${tableOf(projection)}${conditions.length ? ` WHERE ${conditions.join(" AND ")}` : ""} ORDER BY ${query.order.map((c) => c + direction).join(", ")} ${LIMIT}`;
      values.push(query.limit);
      return statement(sql).all(...values) as Doc[];
    },
  };
}
