// Documents under way: a commit posted to a store whose commits apply in call order
// (ReadModelStore.ordered) and not answered yet. The reads of the handle that posted them answer
// them at once, merged with what is stored, as if committed, so a read waiting for a position is
// told once the batch holding it is folded and posted, not a commit's round trip later. Pure: the
// documents under way and a read of the stored rows in, the page out, as the stores' statements
// select and order them (test/store/under-way.test.ts compares it with the same documents committed).
import { compareText, querySemantics, type Columns, type Doc, type TableQuery } from "./tables.js";

/** A document under way of a table read model, with its columns (`key` among them). */
export type Candidate = Doc & { row: Columns };

/**
 * A table query's page with the documents under way. The store is read for as many more rows than
 * the limit as documents under way may replace a stored row it selects: a stored row has the
 * `fixed` columns of its document under way (never changed after the first write), so those
 * matching the query's equality on fixed columns (and the key) are all it can be. Stored rows with
 * a document under way are dropped, the documents under way the query selects merged in its order.
 */
export function pageUnderWay(q: TableQuery, fixed: readonly string[], underWay: readonly Candidate[], read: (limit: number) => Doc[], columnsOf: (stored: Doc) => Columns): Doc[] {
  const { equal, selects, order } = querySemantics(q);
  const byFixed = [...fixed, "key"];
  const replaced = new Set(underWay.map((c) => c.key));
  const stored = read(q.limit + underWay.filter((c) => equal(c.row, byFixed)).length).filter((r) => !replaced.has(r.key));
  const mine = underWay.filter((c) => selects(c.row));
  // none selected: the stored rows in their order (no columns needed)
  if (mine.length === 0) return stored.slice(0, q.limit);
  return [...stored.map((r): Candidate => ({ ...r, row: columnsOf(r) })), ...mine]
    .sort((a, b) => order(a.row, b.row))
    .slice(0, q.limit)
    .map(({ key, doc }) => ({ key, doc }));
}

/**
 * A listing by key (from `from`, before `to`, after `after`, at most `limit`; -1: all) with the
 * documents under way in its range: the store read for as many more rows as there are of them.
 */
export function listUnderWay(underWay: Iterable<Doc>, { from, to, after, limit }: { from: string; to: string | null; after: string; limit: number }, read: (limit: number) => Doc[]): Doc[] {
  const mine = [...underWay].filter(({ key }) => compareText(key, from) >= 0 && (to === null || compareText(key, to) < 0) && compareText(key, after) > 0);
  if (mine.length === 0) return read(limit);
  const replaced = new Set(mine.map((d) => d.key));
  const rows = [...read(limit < 0 ? limit : limit + mine.length).filter((r) => !replaced.has(r.key)), ...mine].sort((a, b) => compareText(a.key, b.key));
  return limit < 0 ? rows : rows.slice(0, limit);
}
