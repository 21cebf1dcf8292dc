// Read models: documents and checkpoints in the events' schema, committed without waiting for the
// WAL flush (rebuilt from the events; the next append's synchronous commit flushes them).
import type pg from "pg";
import { parsedDocs } from "../port/parsed-docs.js";
import { checkCheckpoint, type ListPage, type ReadModelStore } from "../port/read-models.js";
import { prefixEnd } from "../sql.js";
import { inTransaction, type Statements } from "./pool.js";
import { postgresTables } from "./tables.js";

export function postgresReadModels(pool: pg.Pool, schema: string, sql: Statements, close: () => Promise<void>): ReadModelStore {
  const { query } = sql;
  const tables = postgresTables(schema, sql);
  // documents read as text and parsed once per text (../port/parsed-docs.ts); getMany's are parsed by the driver, the caller's own
  const parse = parsedDocs();
  const parsed = <T>(projection: string, rows: { key: string; doc: string }[]) => rows.map((r) => parse<T>(projection, r.key, r.doc));
  /** The rows of a listing (list, keys). */
  async function listed(projection: string, keyPrefix: string, { after = "", limit }: ListPage = {}): Promise<{ key: string; doc: string }[]> {
    // The prefix's range of the primary key (prefixEnd), not a filter: the listing reads its page only.
    const to = keyPrefix === "" ? null : prefixEnd(keyPrefix);
    if (await tables.isTable(projection)) return tables.list(projection, keyPrefix, to, after, limit ?? null);
    // two statements, not `$3 IS NULL OR key < $3`: a generic plan could not bound the index scan by it
    return to === null
      ? query<{ key: string; doc: string }>("SELECT key, doc::text AS doc FROM read_models WHERE projection = $1 AND key > $2 ORDER BY key LIMIT $3", [projection, after, limit ?? null], "cardflow_list_all")
      : query<{ key: string; doc: string }>(
          "SELECT key, doc::text AS doc FROM read_models WHERE projection = $1 AND key >= $2 AND key < $3 AND key > $4 ORDER BY key LIMIT $5",
          [projection, keyPrefix, to, after, limit ?? null],
          "cardflow_list",
        );
  }
  return {
    async checkpoint(projection) {
      const [r] = await query<{ position: string }>("SELECT position FROM checkpoints WHERE projection = $1", [projection], "cardflow_checkpoint");
      return r ? Number(r.position) : 0;
    },
    async checkpoints(projections) {
      const rows = await query<{ projection: string; position: string }>("SELECT projection, position FROM checkpoints WHERE projection = ANY($1::text[])", [projections], "cardflow_checkpoints");
      const stored = new Map(rows.map((r) => [r.projection, Number(r.position)]));
      return projections.map((p) => stored.get(p) ?? 0);
    },
    async get<T>(projection: string, key: string) {
      const doc = (await tables.isTable(projection))
        ? await tables.get(projection, key)
        : (await query<{ doc: string }>("SELECT doc::text AS doc FROM read_models WHERE projection = $1 AND key = $2", [projection, key], "cardflow_get"))[0]?.doc;
      return doc === undefined ? undefined : parse<T>(projection, key, doc);
    },
    async getMany<T>(projection: string, keys: readonly string[]) {
      if (keys.length === 0) return new Map<string, T>();
      const rows = (await tables.isTable(projection))
        ? await tables.getMany<T>(projection, keys)
        : await query<{ key: string; doc: T }>("SELECT key, doc FROM read_models WHERE projection = $1 AND key = ANY($2::text[])", [projection, keys]);
      return new Map(rows.map((r) => [r.key, r.doc]));
    },
    async list<T>(projection: string, keyPrefix: string, page?: ListPage) {
      return parsed<T>(projection, await listed(projection, keyPrefix, page));
    },
    async keys(projection: string, keyPrefix: string, page?: ListPage) {
      return (await listed(projection, keyPrefix, page)).map((r) => r.key);
    },
    async columns(projection, keys) {
      return keys.length === 0 ? new Map() : tables.columns(projection, keys);
    },
    async count(projection) {
      if (await tables.isTable(projection)) return tables.count(projection);
      const [r] = await query<{ n: string }>("SELECT count(*) AS n FROM read_models WHERE projection = $1", [projection]);
      return Number(r!.n);
    },
    async prepare(projection, shape) {
      // unbounded: a changed shape drops and makes its table (DDL, a bulk delete)
      return inTransaction(pool, (c) => tables.prepare(c, projection, shape), { unbounded: true });
    },
    query: async <T>(projection: string, q: Parameters<ReadModelStore["query"]>[1]) => parsed<T>(projection, await tables.query(projection, q)),
    async queryAtHead<T>(projection: string, q: Parameters<ReadModelStore["query"]>[1]) {
      const rows = await tables.query(projection, q, true);
      return { docs: parsed<T>(projection, rows), atHead: rows[0]?.at_head === true };
    },
    async commitBatch(commits) {
      // Read models are rebuilt from the events: their commit need not wait for the WAL flush
      // (docs/stores.md; the next append's synchronous commit flushes it), set in BEGIN's round trip.
      // Then at most two more: the committers' locks with the checkpoints they check, and every
      // write of the batch (each table's upsert, the documents', the checkpoints') as one statement.
      const inTables = await Promise.all(commits.map((x) => tables.isTable(x.projection)));
      // a key given twice in a commit is set to its last document (as statements run in order would):
      // one INSERT … ON CONFLICT DO UPDATE may not touch a row twice
      commits = commits.map((x) => (x.docs.length < 2 ? x : { ...x, docs: [...new Map(x.docs.map((d) => [d.key, d])).values()] }));
      await inTransaction(
        pool,
        async (c) => {
          // One committer per projection at a time (also when its checkpoint row does not exist yet);
          // locks taken in name order (unnest keeps the array's), so two batches over the same
          // projections cannot deadlock.
          const checked = commits.filter((x) => x.expectedCheckpoint !== undefined).sort((a, b) => (a.projection < b.projection ? -1 : a.projection > b.projection ? 1 : 0));
          if (checked.length > 0) {
            // the checkpoints read after the locks were granted, in one round trip (migration 011)
            const { rows } = await c.query<{ projection: string; position: string }>({
              name: "cardflow_rm_commit_check",
              text: "SELECT checked_projection AS projection, checked_position AS position FROM read_model_commit_check($1::text[], $2::text[])",
              values: [checked.map((x) => `cardflow.read_models.${schema}.${x.projection}`), checked.map((x) => x.projection)],
            });
            const stored = new Map(rows.map((r) => [r.projection, Number(r.position)]));
            for (const { projection, expectedCheckpoint } of checked) checkCheckpoint(projection, expectedCheckpoint, stored.get(projection) ?? 0);
          }
          if (commits.length === 0) return;
          const parts: string[] = [];
          const values: unknown[] = [];
          for (const [i, { projection, docs }] of commits.entries()) {
            if (!inTables[i] || docs.length === 0) continue;
            const part = tables.upsert(projection, docs, values.length);
            parts.push(part.sql);
            values.push(...part.values);
          }
          const docs = commits.flatMap(({ projection, docs }, i) => (inTables[i] ? [] : docs.map((d) => ({ projection, key: d.key, doc: JSON.stringify(d.doc) }))));
          if (docs.length > 0) {
            // the documents as one JSON array (joined texts), not an array literal escaped by the client
            const n = values.length;
            parts.push(`INSERT INTO read_models (projection, key, doc)
             SELECT p, k, d FROM unnest($${n + 1}::text[], $${n + 2}::text[]) WITH ORDINALITY AS x(p, k, i) JOIN jsonb_array_elements($${n + 3}::jsonb) WITH ORDINALITY AS y(d, j) ON i = j
             ON CONFLICT (projection, key) DO UPDATE SET doc = excluded.doc`);
            values.push(docs.map((d) => d.projection), docs.map((d) => d.key), `[${docs.map((d) => d.doc).join(",")}]`);
          }
          const n = values.length;
          values.push(commits.map((x) => x.projection), commits.map((x) => x.checkpoint));
          // data-modifying WITH parts all run, each on its own table, in this one statement
          const text = `${parts.length > 0 ? `WITH ${parts.map((sql, i) => `cf_w${i} AS (${sql})`).join(", ")} ` : ""}INSERT INTO checkpoints (projection, position) SELECT * FROM unnest($${n + 1}::text[], $${n + 2}::bigint[])
             ON CONFLICT (projection) DO UPDATE SET position = excluded.position`;
          await c.query({ name: tables.nameOf(text), text, values });
        },
        { begin: "BEGIN; SET LOCAL synchronous_commit = off" },
      );
    },
    async reset(projection) {
      const inTable = await tables.isTable(projection);
      // unbounded: every document of the read model deleted (a rebuild from zero follows)
      await inTransaction(
        pool,
        async (c) => {
          if (inTable) await tables.reset(c, projection);
          else await c.query("DELETE FROM read_models WHERE projection = $1", [projection]);
          await c.query("DELETE FROM checkpoints WHERE projection = $1", [projection]);
        },
        { unbounded: true },
      );
    },
    close,
  };
}
