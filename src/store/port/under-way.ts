// Documents under way: a commit posted to a store whose commits apply in call order
// (ReadModelStore.ordered) and not answered yet. The reads of the handle that posted them answer
// them at once, merged with what is stored, as if committed, so a read waiting for a position is
// told once the batch holding it is folded and posted, not a commit's round trip later. Pure: the
// stored rows and the documents under way in, the page out, as the stores' statements select and
// order them (test/store/under-way.test.ts compares it with the same documents committed).
import { querySemantics, type Columns, type TableQuery } from "./tables.js";

/** A document with its key and its table columns (`key` among them). */
export interface Candidate {
  key: string;
  text: string;
  row: Columns;
}

/**
 * How many more rows than the limit to read from the store: the documents under way that may
 * replace a stored row the query selects. A stored row has the `fixed` columns of its document
 * under way (never changed after the first write), so those matching the query's equality on
 * fixed columns (and the key) are all it can be.
 */
export function displaced(q: TableQuery, fixed: readonly string[], underWay: readonly Candidate[]): number {
  const { equal } = querySemantics(q);
  const columns = [...fixed, "key"];
  return underWay.reduce((n, c) => (equal(c.row, columns) ? n + 1 : n), 0);
}

/** The documents under way the query selects, in its order. */
export function selected(q: TableQuery, underWay: readonly Candidate[]): Candidate[] {
  const { selects, order } = querySemantics(q);
  return underWay.filter((c) => selects(c.row)).sort((a, b) => order(a.row, b.row));
}

/**
 * The page: the stored rows the query selected (read for limit + displaced rows) less those whose
 * document is under way, with the documents under way it selects (`selected`), in the query's order, limit.
 */
export function mergePage(q: TableQuery, stored: readonly Candidate[], pending: { has(key: string): boolean }, mine: readonly Candidate[]): Candidate[] {
  const { order } = querySemantics(q);
  return [...stored.filter((c) => !pending.has(c.key)), ...mine].sort((a, b) => order(a.row, b.row)).slice(0, q.limit);
}
