// Table read models: `rm_<projection>` in the schema, its key unique, its columns (text in the "C"
// collation, so they order byte by byte like SQLite's and the memory store's) and its indexes; its
// version and shape in read_model_versions. Documents are `json` (kept as text: nothing queries
// inside them). A query is one statement through an index: equality columns, then a row-value
// keyset comparison on the order's columns (a btree index condition) and LIMIT.
import { createHash } from "node:crypto";
import type pg from "pg";
import { checkQuery, checkShape, prefixRangeEnd, shapeText, type ColumnValue, type Doc, type ReadModelShape, type TableQuery, type TableShape } from "../port/tables.js";
import type { Statements } from "./pool.js";

const DOCUMENTS = shapeText({ version: 1 });
const tableOf = (projection: string) => `rm_${projection}`;
/** Statements generated from a shape are named (prepared once per connection) by their text. */
const nameOf = (sql: string) => `cardflow_rm_${createHash("sha1").update(sql).digest("hex").slice(0, 20)}`;

interface Known {
  columns: Record<string, string>;
  fixed: string[];
  /** Set when prepared on this handle (writing needs row()). */
  table?: TableShape;
}

export function postgresTables(schema: string, { query }: Statements) {
  const known = new Map<string, Known | undefined>();

  /** The table's shape if the projection is a table read model (looked up once per handle). */
  async function shapeOf(projection: string): Promise<Known | undefined> {
    if (known.has(projection)) return known.get(projection);
    const [stored] = await query<{ shape: string }>("SELECT shape FROM read_model_versions WHERE projection = $1", [projection], "cardflow_rm_shape");
    const shape = stored && stored.shape !== DOCUMENTS ? (JSON.parse(stored.shape) as Known) : undefined;
    known.set(projection, shape);
    return shape;
  }

  async function create(c: pg.PoolClient, projection: string, table: TableShape) {
    const name = tableOf(projection);
    const columns = Object.entries(table.columns).map(([col, type]) => `, ${col} ${type === "text" ? 'text COLLATE "C"' : "bigint"}`);
    await c.query(`CREATE TABLE ${name} (key text COLLATE "C" PRIMARY KEY, doc json NOT NULL${columns.join("")})`);
    for (const [i, index] of table.indexes.entries()) await c.query(`CREATE INDEX ${name}_${i + 1} ON ${name} (${index.join(", ")})`);
  }

  return {
    isTable: async (projection: string) => (await shapeOf(projection)) !== undefined,
    tableName: tableOf,

    /** Inside the caller's transaction. */
    async prepare(c: pg.PoolClient, projection: string, shape: ReadModelShape): Promise<boolean> {
      checkShape(projection, shape);
      // the committers' lock: no commit of this read model runs while its table changes
      await c.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`cardflow.read_models.${schema}.${projection}`]);
      const text = shapeText(shape);
      const { rows } = await c.query<{ version: number; shape: string }>("SELECT version, shape FROM read_model_versions WHERE projection = $1", [projection]);
      const stored = rows[0] ?? { version: 1, shape: DOCUMENTS };
      // a table dropped by hand (its rows gone, its checkpoint not) is built again from the events too
      const missing = shape.table !== undefined && (await c.query<{ found: boolean }>("SELECT to_regclass($1) IS NOT NULL AS found", [tableOf(projection)])).rows[0]!.found === false;
      const changed = stored.version !== shape.version || stored.shape !== text || missing;
      if (changed) {
        await c.query(`DROP TABLE IF EXISTS ${tableOf(projection)}`);
        await c.query("DELETE FROM read_models WHERE projection = $1", [projection]);
        await c.query("DELETE FROM checkpoints WHERE projection = $1", [projection]);
        if (shape.table) await create(c, projection, shape.table);
      }
      await c.query(
        "INSERT INTO read_model_versions (projection, version, shape) VALUES ($1, $2, $3) ON CONFLICT (projection) DO UPDATE SET version = excluded.version, shape = excluded.shape",
        [projection, shape.version, text],
      );
      const table = shape.table;
      known.set(projection, table && { columns: { ...table.columns }, fixed: [...(table.fixed ?? [])], table });
      return changed;
    },

    /**
     * The upsert of documents of a table read model, the documents as one JSON array, as a part of a
     * statement: its SQL with parameters numbered from `from` + 1, and their values.
     */
    upsert(projection: string, docs: ReadonlyArray<{ key: string; doc: unknown }>, from: number): { sql: string; values: unknown[] } {
      const shape = known.get(projection);
      if (!shape?.table) throw new Error(`read model ${projection} is a table: prepare() it on this handle before writing`);
      const columns = Object.keys(shape.columns);
      const rows = docs.map((d) => shape.table!.row(d.doc));
      const set = ["doc", ...columns.filter((col) => !shape.fixed.includes(col))].map((col) => `${col} = excluded.${col}`);
      const arrays = columns.map((col, i) => `$${from + i + 3}::${shape.columns[col] === "text" ? "text" : "bigint"}[]`);
      const sql = `INSERT INTO ${tableOf(projection)} (key, doc${columns.map((col) => `, ${col}`).join("")})
        SELECT x.cf_key, y.cf_doc${columns.map((col) => `, x.${col}`).join("")}
        FROM unnest($${from + 1}::text[]${arrays.map((a) => `, ${a}`).join("")}) WITH ORDINALITY AS x(cf_key${columns.map((col) => `, ${col}`).join("")}, cf_i)
        JOIN json_array_elements($${from + 2}::json) WITH ORDINALITY AS y(cf_doc, cf_j) ON x.cf_i = y.cf_j
        ON CONFLICT (key) DO UPDATE SET ${set.join(", ")}`;
      return { sql, values: [docs.map((d) => d.key), `[${docs.map((d) => JSON.stringify(d.doc)).join(",")}]`, ...columns.map((col) => rows.map((r) => r[col] ?? null))] };
    },
    /** Names a statement (prepared once per connection) by its text. */
    nameOf,
    /** The document's text (parsed by the caller: ../port/parsed-docs.ts). */
    async get(projection: string, key: string) {
      const sql = `SELECT doc::text AS doc FROM ${tableOf(projection)} WHERE key = $1`;
      return (await query<{ doc: string }>(sql, [key], nameOf(sql)))[0]?.doc;
    },
    /** The stored columns of the rows among `keys`, by key (integers as numbers, as row() gives them); none for documents. */
    async columns(projection: string, keys: readonly string[]): Promise<Map<string, Record<string, ColumnValue>>> {
      const shape = await shapeOf(projection);
      const found = new Map<string, Record<string, ColumnValue>>();
      if (!shape) return found;
      const columns = Object.keys(shape.columns);
      const sql = `SELECT key${columns.map((col) => `, ${col}`).join("")} FROM ${tableOf(projection)} WHERE key = ANY($1::text[])`;
      for (const { key, ...row } of await query<Record<string, ColumnValue>>(sql, [keys], nameOf(sql))) {
        // bigint comes back as text
        found.set(String(key), Object.fromEntries(columns.map((col) => [col, shape.columns[col] === "text" || row[col] === null ? row[col]! : Number(row[col])])));
      }
      return found;
    },
    async getMany<T>(projection: string, keys: readonly string[]) {
      const sql = `SELECT key, doc FROM ${tableOf(projection)} WHERE key = ANY($1::text[])`;
      return query<{ key: string; doc: T }>(sql, [keys], nameOf(sql));
    },
    async list(projection: string, from: string, to: string | null, after: string, limit: number | null) {
      const sql = `SELECT key, doc::text AS doc FROM ${tableOf(projection)} WHERE key >= $1${to === null ? "" : " AND key < $4"} AND key > $2 ORDER BY key LIMIT $3`;
      return query<Doc>(sql, to === null ? [from, after, limit] : [from, after, limit, to], nameOf(sql));
    },
    async count(projection: string) {
      return Number((await query<{ n: string }>(`SELECT count(*) AS n FROM ${tableOf(projection)}`))[0]!.n);
    },
    reset: (c: pg.PoolClient, projection: string) => c.query(`DELETE FROM ${tableOf(projection)}`),

    /** atHead: each row also says whether the projection's checkpoint had reached the events' head in the statement's snapshot. */
    async query(projection: string, q: TableQuery, atHead = false): Promise<Array<Doc & { at_head?: boolean }>> {
      const shape = await shapeOf(projection);
      if (!shape) throw new Error(`read model ${projection} is not a table`);
      checkQuery(projection, Object.keys(shape.columns), q);
      const values: unknown[] = [];
      const param = (v: unknown) => `$${values.push(v)}`;
      const equal = Object.entries(q.where).map(([col, v]) => ({ col, value: v === null ? null : param(v) }));
      // An order by the key alone is led by the equality columns, and so are its bounds (a key
      // prefix's range, the keyset), as row values: `account = $1 AND (account, key) > ($1, $2)
      // ORDER BY account, key`, which only an index leading with them serves. Written `key > $2
      // ORDER BY key` (or `key >= $2 AND key < $3`), the planner may take the primary key across
      // every account, for an account holding most rows or a narrow key range, and drop the other
      // accounts' rows (the plans test).
      const lead = q.order[0] === "key" ? equal.filter(({ value }) => value !== null) : [];
      const row = (columns: readonly string[], op: string, vs: string[]) =>
        `(${[...lead.map(({ col }) => col), ...columns].join(", ")}) ${op} (${[...lead.map(({ value }) => value), ...vs].join(", ")})`;
      const bound = (column: string, op: string, v: string) => (lead.length ? row([column], op, [v]) : `${column} ${op} ${v}`);
      // a prefix: its range's lower bound (unless the keyset, past it, is the lower bound) and end, in the columns' "C" collation
      const end = q.prefix && prefixRangeEnd(q.prefix.value);
      // a led range's end bounds the equality columns too: their own equality is left out (with it the planner took another index)
      const bounded = lead.length > 0 && q.prefix !== undefined && end !== null;
      const conditions = equal.filter((e) => !(bounded && lead.includes(e))).map(({ col, value }) => (value === null ? `${col} IS NULL` : `${col} = ${value}`));
      if (q.prefix && !q.after) conditions.push(bound(q.prefix.column, ">=", param(q.prefix.value)));
      if (q.prefix && end !== null) conditions.push(bound(q.prefix.column, "<", param(end)));
      if (q.after) conditions.push(row(q.order, q.direction === "desc" ? "<" : ">", q.after.map((v) => param(v))));
      const order = [...lead.map(({ col }) => col), ...q.order];
      const direction = q.direction === "desc" ? " DESC" : "";
      const head = atHead ? `, (SELECT coalesce(max(position), 0) FROM events) <= coalesce((SELECT position FROM checkpoints WHERE projection = ${param(projection)}), 0) AS at_head` : "";
      const sql = `SELECT key, doc::text AS doc${head} FROM ${tableOf(projection)}${conditions.length ? ` WHERE ${conditions.join(" AND ")}` : ""} ORDER BY ${order.map((col) => col + direction).join(", ")} LIMIT ${param(q.limit)}`;
      return query<Doc>(sql, values, nameOf(sql));
    },
  };
}
