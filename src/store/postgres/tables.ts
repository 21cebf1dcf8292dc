// Table read models: `rm_<projection>` in the schema, its key unique, its columns (text in the "C"
// collation, so they order byte by byte like SQLite's and the memory store's) and its indexes; its
// version and shape in read_model_versions. Documents are `json` (kept as text: nothing queries
// inside them). A query is one statement through an index: equality columns, then a row-value
// keyset comparison on the order's columns (a btree index condition) and LIMIT.
import { createHash } from "node:crypto";
import type pg from "pg";
import { checkQuery, checkShape, prefixRangeEnd, shapeText, type ReadModelShape, type TableQuery, type TableShape } from "../port/tables.js";
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

  /**
   * A prefix of `key` (in the "C" collation: byte order) as row values led by the equality columns,
   * with no equality of its own: `(account, key) >= ($1, $2) AND (account, key) < ($1, $3) ORDER BY
   * account, key`, which only an index leading with those columns serves. Written `account = $1 AND
   * key >= $2 ...`, the planner may take the key's own index (the primary key: the range, or the
   * order once account is known) across every account, reading the other accounts' rows to drop
   * them. The keyset, when given, is the lower bound.
   */
  async function keyPrefixQuery<T>(projection: string, q: TableQuery): Promise<T[]> {
    const values: unknown[] = [];
    const param = (v: unknown) => `$${values.push(v)}`;
    const equal = Object.entries(q.where);
    if (equal.some(([, v]) => v === null)) throw new Error(`read model ${projection}: a key prefix with IS NULL`);
    const lead = equal.map(([col]) => col);
    const leadValues = equal.map(([, v]) => param(v));
    const bound = (columns: string[], op: string, vs: string[]) => `(${columns.join(", ")}) ${op} (${vs.join(", ")})`;
    const end = prefixRangeEnd(q.prefix!.value);
    const conditions = [q.after ? bound([...lead, ...q.order], ">", [...leadValues, ...q.after.map(param)]) : bound([...lead, "key"], ">=", [...leadValues, param(q.prefix!.value)])];
    conditions.push(end === null ? lead.map((col, i) => `${col} = ${leadValues[i]}`).join(" AND ") : bound([...lead, "key"], "<", [...leadValues, param(end)]));
    const sql = `SELECT doc FROM ${tableOf(projection)} WHERE ${conditions.join(" AND ")} ORDER BY ${[...lead, ...q.order].join(", ")} LIMIT ${param(q.limit)}`;
    return (await query<{ doc: T }>(sql, values, nameOf(sql))).map((r) => r.doc);
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
      const changed = stored.version !== shape.version || stored.shape !== text;
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
    async get<T>(projection: string, key: string) {
      const sql = `SELECT doc FROM ${tableOf(projection)} WHERE key = $1`;
      return (await query<{ doc: T }>(sql, [key], nameOf(sql)))[0]?.doc;
    },
    async getMany<T>(projection: string, keys: readonly string[]) {
      const sql = `SELECT key, doc FROM ${tableOf(projection)} WHERE key = ANY($1::text[])`;
      return query<{ key: string; doc: T }>(sql, [keys], nameOf(sql));
    },
    async list<T>(projection: string, from: string, to: string | null, after: string, limit: number | null) {
      const sql = `SELECT doc FROM ${tableOf(projection)} WHERE key >= $1${to === null ? "" : " AND key < $4"} AND key > $2 ORDER BY key LIMIT $3`;
      return (await query<{ doc: T }>(sql, to === null ? [from, after, limit] : [from, after, limit, to], nameOf(sql))).map((r) => r.doc);
    },
    async count(projection: string) {
      return Number((await query<{ n: string }>(`SELECT count(*) AS n FROM ${tableOf(projection)}`))[0]!.n);
    },
    reset: (c: pg.PoolClient, projection: string) => c.query(`DELETE FROM ${tableOf(projection)}`),

    async query<T>(projection: string, q: TableQuery): Promise<T[]> {
      const shape = await shapeOf(projection);
      if (!shape) throw new Error(`read model ${projection} is not a table`);
      checkQuery(projection, Object.keys(shape.columns), q);
      const values: unknown[] = [];
      const param = (v: unknown) => `$${values.push(v)}`;
      if (q.prefix?.column === "key" && Object.keys(q.where).length) return keyPrefixQuery<T>(projection, q);
      const equal = Object.entries(q.where).map(([col, v]) => ({ col, value: v === null ? null : param(v) }));
      const conditions = equal.map(({ col, value }) => (value === null ? `${col} IS NULL` : `${col} = ${value}`));
      // An order by the key alone is led by the equality columns, and so is its keyset, as row
      // values: `(account, key) > ($1, $2) ORDER BY account, key`, which only an index leading with
      // them serves. Written `account = $1 AND key > $2 ORDER BY key`, the planner walked the
      // primary key for an account holding most rows, dropping the others' (the plans test).
      const lead = q.order[0] === "key" ? equal.filter(({ value }) => value !== null) : [];
      // a prefix: its range's lower bound (unless the keyset, past it, is the lower bound) and end, in the columns' "C" collation
      const end = q.prefix && prefixRangeEnd(q.prefix.value);
      if (q.prefix && !q.after) conditions.push(`${q.prefix.column} >= ${param(q.prefix.value)}`);
      if (q.prefix && end !== null) conditions.push(`${q.prefix.column} < ${param(end)}`);
      const order = [...lead.map(({ col }) => col), ...q.order];
      if (q.after) conditions.push(`(${order.join(", ")}) ${q.direction === "desc" ? "<" : ">"} (${[...lead.map(({ value }) => value), ...q.after.map((v) => param(v))].join(", ")})`);
      const direction = q.direction === "desc" ? " DESC" : "";
      const sql = `SELECT doc FROM ${tableOf(projection)}${conditions.length ? ` WHERE ${conditions.join(" AND ")}` : ""} ORDER BY ${order.map((col) => col + direction).join(", ")} LIMIT ${param(q.limit)}`;
      return (await query<{ doc: T }>(sql, values, nameOf(sql))).map((r) => r.doc);
    },
  };
}
