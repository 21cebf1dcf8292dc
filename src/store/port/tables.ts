// Read models kept as tables of their own: a row per document, with columns derived from it and
// indexes shaped for the queries the API, the console and the CLI make, so a list reads the rows
// it returns (plus one to say whether more follow) and never scans.

/** A column's type: text (compared byte by byte) or a 64-bit integer; null is always allowed. */
export type ColumnType = "text" | "integer";
export type ColumnValue = string | number | null;

export interface TableShape<Doc = any> {
  /** Columns besides `key` (unique, the document's key) and the document itself. Names: [a-z_][a-z0-9_]*, not cf_*. */
  columns: Readonly<Record<string, ColumnType>>;
  /** Columns set when a row is first written and never changed after: an update leaves them (and their indexes) alone. */
  fixed?: readonly string[];
  /** Each index: equality columns first, then the order's columns (`key` may close it). */
  indexes: readonly (readonly string[])[];
  /** The columns' values of a document. */
  row(doc: Doc): Readonly<Record<string, ColumnValue>>;
}

/** How a read model is kept, and its version. */
export interface ReadModelShape {
  /**
   * Bumped whenever its documents, columns or indexes change: prepare() then drops what the earlier
   * version stored and the runner folds it again from the events, at start, with no manual step.
   */
  version: number;
  /** A table of its own; absent: documents by key in the shared documents table. */
  table?: TableShape;
}

/** A page of a table read model, by one of its indexes. */
export interface TableQuery {
  /** Equality on columns (`key` too); a null value matches null. */
  where: Readonly<Record<string, string | number | null>>;
  /** The order's columns, the last ones unique together (e.g. ["created", "key"]). */
  order: readonly string[];
  direction: "asc" | "desc";
  /** Keyset: only rows strictly past these values of `order`, in the order's direction. */
  after?: readonly (string | number)[];
  /**
   * Only rows whose text `column` (the first of `order`, ascending) starts with `value`: the
   * index's range `column >= value AND column < prefixEnd(value)`, compared byte by byte (UTF-8),
   * read in order and stopped at the prefix's end. With `after`, after[0] >= value (the keyset is then the lower bound).
   */
  prefix?: { column: string; value: string };
  limit: number;
}

const NAME = /^[a-z_][a-z0-9_]{0,40}$/;

/** Refuses names that could not be an SQL identifier as they are (they are written into statements). */
export function checkShape(projection: string, shape: ReadModelShape): void {
  if (!NAME.test(projection)) throw new Error(`read model name ${JSON.stringify(projection)}: [a-z_][a-z0-9_]* of at most 41 characters`);
  const table = shape.table;
  if (!table) return;
  const columns = Object.keys(table.columns);
  for (const c of columns) if (!NAME.test(c) || ["key", "doc"].includes(c) || c.startsWith("cf_")) throw new Error(`read model ${projection}: column name ${JSON.stringify(c)}`);
  for (const c of [...(table.fixed ?? []), ...table.indexes.flat()]) if (c !== "key" && !columns.includes(c)) throw new Error(`read model ${projection}: no column ${c}`);
}

/** The shape as it is stored beside the version (row() is code, not shape). */
export const shapeText = (shape: ReadModelShape) =>
  JSON.stringify(shape.table ? { columns: shape.table.columns, fixed: shape.table.fixed ?? [], indexes: shape.table.indexes } : "documents");

/** Refuses a query naming a column the table does not have. */
export function checkQuery(projection: string, columns: readonly string[], q: TableQuery): void {
  const known = (c: string) => c === "key" || columns.includes(c);
  for (const c of [...Object.keys(q.where), ...q.order]) if (!known(c)) throw new Error(`read model ${projection}: no column ${c}`);
  if (q.after && q.after.length !== q.order.length) throw new Error(`read model ${projection}: a keyset needs a value per order column`);
  if (q.prefix) {
    if (q.prefix.column !== q.order[0] || q.direction !== "asc") throw new Error(`read model ${projection}: a prefix is of the order's first column, ascending`);
    if (q.prefix.value === "" || (q.after && compareText(String(q.after[0]), q.prefix.value) < 0)) throw new Error(`read model ${projection}: a prefix is not empty and a keyset within it starts at it or past it`);
  }
}

/**
 * The first string after every string that starts with `prefix`, in code point order (UTF-8 bytes
 * order the same): its last code point moved up by one (past the surrogates, which UTF-8 cannot
 * hold; a last U+10FFFF is dropped and the one before moved up). null: no end (every string
 * after the prefix starts with it). `col >= prefix AND col < end` is then the prefix's range of an index.
 */
export function prefixRangeEnd(prefix: string): string | null {
  const points = [...prefix];
  while (points.length) {
    const last = points.pop()!.codePointAt(0)!;
    if (last < 0x10ffff) return points.join("") + String.fromCodePoint(last === 0xd7ff ? 0xe000 : last + 1);
  }
  return null;
}

/**
 * Byte order of the UTF-8 text (SQLite's BINARY, PostgreSQL's "C"), which JavaScript's `<` on UTF-16
 * breaks past U+FFFF: code units compared while both are below the surrogates (the same order
 * there), the bytes beyond.
 */
export function compareText(a: string, b: string): number {
  if (a === b) return 0;
  for (let i = 0; i < a.length && i < b.length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    return x < 0xd800 && y < 0xd800 ? x - y : Buffer.compare(Buffer.from(a), Buffer.from(b));
  }
  return a.length - b.length;
}

/** SQL's order of column values: null first, text byte by byte (UTF-8), numbers by value. */
export const compareValues = (a: ColumnValue, b: ColumnValue) =>
  a === b ? 0 : a === null ? -1 : b === null ? 1 : typeof a === "string" && typeof b === "string" ? compareText(a, b) : a < b ? -1 : 1;

/** A row as read for get, list and query: its key and its document's text (parsed by the caller: ./parsed-docs.ts). */
export type Doc = { key: string; doc: string };

/** A row's columns, `key` among them. */
export type Columns = Readonly<Record<string, ColumnValue>>;

/**
 * What a query means over rows, in JavaScript, as the SQL stores' statements select and order
 * them: the in-memory store's query, and the merge of documents under way (./under-way.ts).
 */
export function querySemantics(q: TableQuery) {
  const sign = q.direction === "asc" ? 1 : -1;
  const at = (row: Columns, column: string) => row[column] ?? null;
  const where = Object.entries(q.where);
  /** The equality conditions (on `columns` only, when given). */
  const equal = (row: Columns, columns?: readonly string[]) => where.every(([c, v]) => (columns !== undefined && !columns.includes(c)) || compareValues(at(row, c), v) === 0);
  const past = (row: Columns) => {
    for (const [i, c] of (q.after ? q.order : []).entries()) {
      const d = compareValues(at(row, c), q.after![i]!);
      if (d !== 0) return sign * d > 0;
    }
    return !q.after;
  };
  // with a keyset, its start (within the prefix: checkQuery) is the lower bound; the range's end is the prefix's
  const within = (row: Columns) => !q.prefix || (typeof at(row, q.prefix.column) === "string" && (at(row, q.prefix.column) as string).startsWith(q.prefix.value));
  return {
    equal,
    selects: (row: Columns) => equal(row) && past(row) && within(row),
    order(a: Columns, b: Columns) {
      for (const c of q.order) {
        const d = compareValues(at(a, c), at(b, c));
        if (d !== 0) return sign * d;
      }
      return 0;
    },
  };
}
