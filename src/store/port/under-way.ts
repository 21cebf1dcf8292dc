// Documents under way: a commit posted to a store whose commits apply in call order
// (ReadModelStore.ordered) and not answered yet. The reads of the handle that posted them answer
// them at once, merged with what is stored, as if committed, so a read waiting for a position is
// told once the batch holding it is folded and posted, not a commit's round trip later. Pure: the
// stored rows and the documents under way in, the page out, as the stores' statements select and
// order them (test/store/under-way.test.ts compares it with the same documents committed).
import { compareText, prefixRangeEnd, type ColumnValue, type TableQuery } from "./tables.js";

/** A document with its key and its table columns (`key` among them). */
export interface Candidate {
  key: string;
  text: string;
  row: Readonly<Record<string, ColumnValue>>;
}

/** The stores' order of column values: null first, integers as numbers, text byte by byte (UTF-8). */
const compareValue = (a: ColumnValue | undefined, b: ColumnValue | undefined): number =>
  a === b ? 0 : a == null ? -1 : b == null ? 1 : typeof a === "number" && typeof b === "number" ? a - b : compareText(String(a), String(b));

function compareOn(columns: readonly string[], a: Candidate["row"], b: readonly ColumnValue[]): number {
  for (const [i, column] of columns.entries()) {
    const c = compareValue(a[column], b[i]);
    if (c !== 0) return c;
  }
  return 0;
}

const valuesOf = (columns: readonly string[], row: Candidate["row"]) => columns.map((c) => row[c] ?? null);

/** Whether the query's equality conditions on `columns` hold for the row (all of them when omitted). */
function equal(q: TableQuery, row: Candidate["row"], columns?: readonly string[]): boolean {
  for (const [column, value] of Object.entries(q.where)) {
    if (columns && !columns.includes(column)) continue;
    if (value === null ? row[column] != null : compareValue(row[column], value) !== 0) return false;
  }
  return true;
}

/** Whether the query selects the row: its equality, its prefix's range and its keyset. */
export function selects(q: TableQuery, row: Candidate["row"]): boolean {
  if (!equal(q, row)) return false;
  if (q.prefix) {
    const value = row[q.prefix.column];
    if (typeof value !== "string") return false;
    if (!q.after && compareText(value, q.prefix.value) < 0) return false;
    const end = prefixRangeEnd(q.prefix.value);
    if (end !== null && compareText(value, end) >= 0) return false;
  }
  if (q.after && (q.direction === "asc" ? 1 : -1) * compareOn(q.order, row, q.after) <= 0) return false;
  return true;
}

/**
 * How many more rows than the limit to read from the store: the documents under way that may
 * replace a stored row the query selects. A stored row has the `fixed` columns of its document
 * under way (never changed after the first write), so those matching the query's equality on
 * fixed columns (and the key) are all it can be.
 */
export const displaced = (q: TableQuery, fixed: readonly string[], underWay: readonly Candidate[]) =>
  underWay.filter((c) => equal(q, c.row, [...fixed, "key"])).length;

/**
 * The page: the stored rows the query selected (read for limit + displaced rows) less those whose
 * document is under way, with the documents under way it selects, in the query's order, limit.
 */
export function mergePage(q: TableQuery, stored: readonly Candidate[], underWay: readonly Candidate[]): Candidate[] {
  const pending = new Set(underWay.map((c) => c.key));
  const sign = q.direction === "asc" ? 1 : -1;
  return [...stored.filter((c) => !pending.has(c.key)), ...underWay.filter((c) => selects(q, c.row))]
    .sort((a, b) => sign * compareOn(q.order, a.row, valuesOf(q.order, b.row)))
    .slice(0, q.limit);
}
