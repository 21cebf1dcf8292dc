// In-memory read-model store, the reference implementation of ReadModelStore: documents by key in
// maps; a table read model is a map of rows (document and columns) queried with the same
// semantics as the SQL tables (equality, prefix, keyset, order, limit), by a scan: fine for tests and
// embedding, not for a million rows.
import { deepFreeze } from "../port/parsed-docs.js";
import { checkCheckpoint, type ListPage, type ReadModelStore } from "../port/read-models.js";
import { checkQuery, checkShape, querySemantics, shapeText, type ColumnValue, type TableShape } from "../port/tables.js";

interface Row {
  /** Frozen when written, so get, list and query share it (as the SQL stores share a parse); getMany copies it. */
  doc: unknown;
  columns: Readonly<Record<string, ColumnValue>>;
}

export function createMemoryReadModels(): ReadModelStore {
  const docs = new Map<string, Map<string, Row>>();
  const checkpoints = new Map<string, number>();
  const shapes = new Map<string, { version: number; text: string; table?: TableShape }>();
  const table = (projection: string) => {
    let t = docs.get(projection);
    if (!t) docs.set(projection, (t = new Map()));
    return t;
  };
  /** The rows of a listing (list, keys), by key. */
  const listed = (projection: string, keyPrefix: string, { after = "", limit = Number.MAX_SAFE_INTEGER }: ListPage = {}) =>
    [...table(projection)]
      .filter(([k]) => k.startsWith(keyPrefix) && k > after)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .slice(0, limit);
  const tableShape = (projection: string) => {
    const shape = shapes.get(projection)?.table;
    if (!shape) throw new Error(`read model ${projection} is not a table`);
    return shape;
  };
  const reset = (projection: string) => {
    docs.delete(projection);
    checkpoints.delete(projection);
  };
  return {
    async checkpoint(projection) {
      return checkpoints.get(projection) ?? 0;
    },
    async get<T>(projection: string, key: string) {
      const row = table(projection).get(key);
      return row?.doc as T | undefined;
    },
    async getMany<T>(projection: string, keys: readonly string[]) {
      const t = table(projection);
      const found = new Map<string, T>();
      for (const key of keys) if (t.has(key)) found.set(key, structuredClone(t.get(key)!.doc) as T);
      return found;
    },
    async list<T>(projection: string, keyPrefix: string, page?: ListPage) {
      return listed(projection, keyPrefix, page).map(([, r]) => r.doc as T);
    },
    async keys(projection: string, keyPrefix: string, page?: ListPage) {
      return listed(projection, keyPrefix, page).map(([key]) => key);
    },
    async columns(projection: string, keys: readonly string[]) {
      const found = new Map<string, Readonly<Record<string, ColumnValue>>>();
      if (!shapes.get(projection)?.table) return found;
      const t = table(projection);
      for (const key of keys) {
        const row = t.get(key);
        if (row) found.set(key, Object.fromEntries(Object.entries(row.columns).filter(([c]) => c !== "key")));
      }
      return found;
    },
    async count(projection: string) {
      return table(projection).size;
    },
    async commitBatch(commits) {
      // Every check before any write: all or nothing.
      for (const c of commits) checkCheckpoint(c.projection, c.expectedCheckpoint, checkpoints.get(c.projection) ?? 0);
      for (const { projection, docs, checkpoint } of commits) {
        const t = table(projection);
        const shape = shapes.get(projection)?.table;
        for (const { key, doc } of docs) {
          const columns = shape ? { ...shape.row(doc), key } : { key };
          const fixed = shape?.fixed ?? [];
          const before = t.get(key)?.columns;
          // fixed columns keep the value of the row's first write, as the SQL tables do
          const kept = before ? { ...columns, ...Object.fromEntries(fixed.map((c) => [c, before[c] ?? null])) } : columns;
          t.set(key, { doc: deepFreeze(structuredClone(doc)), columns: kept });
        }
        checkpoints.set(projection, checkpoint);
      }
    },
    async reset(projection) {
      reset(projection);
    },
    async prepare(projection, shape) {
      checkShape(projection, shape);
      const text = shapeText(shape);
      // nothing recorded: documents at version 1 (what stores written before versions hold)
      const stored = shapes.get(projection) ?? { version: 1, text: shapeText({ version: 1 }) };
      const changed = stored.version !== shape.version || stored.text !== text;
      if (changed) reset(projection);
      shapes.set(projection, { version: shape.version, text, ...(shape.table && { table: shape.table }) });
      return changed;
    },
    async query<T>(projection: string, q: Parameters<ReadModelStore["query"]>[1]) {
      checkQuery(projection, Object.keys(tableShape(projection).columns), q);
      const { selects, order } = querySemantics(q);
      return [...table(projection).values()]
        .filter((r) => selects(r.columns))
        .sort((a, b) => order(a.columns, b.columns))
        .slice(0, q.limit)
        .map((r) => r.doc as T);
    },
    async close() {},
  };
}
