// The account's payments, newest first (created time, then payment id), read from the payments
// table through the index of the one filter asked for, a page by keyset: a request reads the rows
// it returns plus one (which says whether more follow), wherever the page is, however many
// payments the account holds. Pages stay right while payments arrive: a new payment is newer than
// every page already read, and a cursor is a position in the order, not an offset.
//
// Filters: `status`, `capture_method`, `terminal_id`, `external_customer_id`: one at a time (each
// has its index; two together would read rows to drop them). `q` searches instead (search()
// below): the payments whose id or external transaction id starts with q, in that text's order;
// the other filters then apply to what it reads.
import { sealedCursors } from "../src/cursors.js";
import { InvalidRequest } from "../src/errors.js";
import type { ReadModelStore } from "../src/store/port.js";
import { compareText } from "../src/store/port/tables.js";
import type { PaymentStatus } from "../machines/payment.js";
import { paymentsProjection, type PaymentDoc } from "./payments.js";

/** A shorter q is matched whole (a reference may be `7`); from this many characters on, by its start. */
export const SEARCH_PREFIX_MIN = 3;

export interface PaymentListFilters {
  external_account_id: string;
  status?: PaymentStatus | undefined;
  capture_method?: "automatic" | "manual" | undefined;
  terminal_id?: string | undefined;
  external_customer_id?: string | undefined;
  /** The start of a payment id or of an external transaction id (the whole of one, when shorter than SEARCH_PREFIX_MIN). */
  q?: string | undefined;
}

/** A place in the list's order: the page starts after it. */
export type ListPosition = { created: string; payment_id: string } | SearchPosition;
/** A place in a search's order (q): the id or reference q matched, then the payment id. */
export interface SearchPosition {
  matched: string;
  payment_id: string;
}

export interface PaymentPage {
  docs: PaymentDoc[];
  has_more: boolean;
  /** Where the next page starts (the last payment of this one, or where a search stopped reading), when has_more. */
  next: ListPosition | null;
}

const FILTERS = { status: "status", capture_method: "capture_method", terminal_id: "terminal_id", external_customer_id: "customer_id" } as const;

const positionOf = (doc: PaymentDoc): ListPosition => ({ created: doc.state.context.intent!.date_created, payment_id: doc.state.context.intent!.payment_id });

export async function listPayments(readModels: Pick<ReadModelStore, "get" | "query">, filters: PaymentListFilters, { limit, after }: { limit: number; after?: ListPosition | undefined }): Promise<PaymentPage> {
  if (filters.q !== undefined) return search(readModels, filters, { limit, after });
  if (after && !("created" in after)) throw new InvalidRequest("cursor: a cursor of a search (q), not of this list", "cursor", "parameter_invalid");
  const chosen = chosenFilters(filters);
  if (chosen.length > 1) {
    throw new InvalidRequest(`${chosen.join(", ")}: filter by one of status, capture_method, terminal_id, external_customer_id at a time (or add q)`, chosen[1]!, "parameter_invalid");
  }
  const where: Record<string, string> = { account: filters.external_account_id };
  for (const f of chosen) where[FILTERS[f]] = filters[f]!;
  const docs = await readModels.query<PaymentDoc>(paymentsProjection.name, {
    where,
    order: ["created", "key"],
    direction: "desc",
    ...(after && { after: [after.created, after.payment_id] }),
    limit: limit + 1,
  });
  const has_more = docs.length > limit;
  const shown = docs.slice(0, limit);
  return { docs: shown, has_more, next: has_more ? positionOf(shown[shown.length - 1]!) : null };
}

const chosenFilters = (filters: PaymentListFilters) => (Object.keys(FILTERS) as (keyof typeof FILTERS)[]).filter((f) => filters[f] !== undefined);
const referenceOf = (doc: PaymentDoc) => paymentsProjection.table!.row(doc).reference as string | null;
/** A search's place before b's (its matched text, then payment id, byte by byte as the indexes order them). */
const before = (a: SearchPosition, b: SearchPosition) => (compareText(a.matched, b.matched) || compareText(a.payment_id, b.payment_id)) < 0;

function checkSearch(q: string) {
  if (q.includes("\0")) throw new InvalidRequest("q: a NUL character cannot be searched for", "q", "parameter_invalid");
  const exact = [...q].length < SEARCH_PREFIX_MIN;
  /** Whether an id or reference is one q finds. */
  const matches = (text: string | null): text is string => text !== null && (exact ? text === q : text.startsWith(q));
  /** The payment's place in the search (the smaller of its id and reference that q finds, then its id); undefined when q finds neither. */
  const placeOf = (doc: PaymentDoc): SearchPosition | undefined => {
    const id = doc.state.context.intent!.payment_id;
    const found = [id, referenceOf(doc)].filter(matches).sort(compareText);
    return found.length ? { matched: found[0]!, payment_id: id } : undefined;
  };
  return { exact, matches, placeOf };
}

/**
 * `q`: the payments whose id or reference starts with q (is q, when shorter than 3 characters),
 * in the order of the matched text, then the id. Two index ranges, (account, key) and (account,
 * reference, key), each read from the cursor for limit + 1 rows and merged: a payment both find
 * is kept at its first place only. Up to the first range's end that was not reached (the
 * cutoff), every payment is known, so the page is the first `limit` of them; the other filters
 * then keep some (a page with a filter may hold fewer than `limit`: follow next_cursor while
 * has_more). Newest first would read every match to sort it (`pi_` matches all).
 */
async function search(readModels: Pick<ReadModelStore, "get" | "query">, filters: PaymentListFilters, { limit, after }: { limit: number; after?: ListPosition | undefined }): Promise<PaymentPage> {
  const q = filters.q!;
  if (after && !("matched" in after)) throw new InvalidRequest("cursor: a cursor of the list without q, not of this search", "cursor", "parameter_invalid");
  const { exact, matches, placeOf } = checkSearch(q);
  const account = filters.external_account_id;
  const read = (column: "key" | "reference", keyset: (string | number)[] | undefined) =>
    readModels.query<PaymentDoc>(paymentsProjection.name, {
      where: exact ? { account, [column]: q } : { account },
      order: exact || column === "key" ? ["key"] : ["reference", "key"],
      direction: "asc",
      ...(!exact && { prefix: { column, value: q } }),
      ...(keyset && { after: keyset }),
      limit: limit + 1,
    });
  const from = after && compareText(after.matched, q);
  const skip = exact && from !== undefined && from > 0; // the cursor is past every place q = the text can have
  const [byId, byReference] = await Promise.all([
    // by id: a place (id, id) is past (m, p) when id > m, or id = m and m > p (one row, by key)
    skip ? [] : read("key", after && from! >= 0 ? [exact ? after.payment_id : after.matched] : undefined),
    skip ? [] : read("reference", after && from! >= 0 ? (exact ? [after.payment_id] : [after.matched, after.payment_id]) : undefined),
  ]);
  const sameAsCursor = after && !exact && from! >= 0 && compareText(after.matched, after.payment_id) > 0 && matches(after.matched) ? await readModels.get<PaymentDoc>(paymentsProjection.name, after.matched) : undefined;
  // each range's cutoff: its last row's place, when it may go on past it
  const cutoffs = [
    byId.length > limit && { matched: byId[byId.length - 1]!.state.context.intent!.payment_id, payment_id: byId[byId.length - 1]!.state.context.intent!.payment_id },
    byReference.length > limit && { matched: referenceOf(byReference[byReference.length - 1]!)!, payment_id: byReference[byReference.length - 1]!.state.context.intent!.payment_id },
  ].filter((c): c is SearchPosition => c !== false);
  const cutoff = cutoffs.sort((a, b) => (before(a, b) ? -1 : 1))[0];
  const found = new Map<string, { doc: PaymentDoc; place: SearchPosition }>();
  for (const doc of [...(sameAsCursor ? [sameAsCursor] : []), ...byId, ...byReference]) {
    const place = placeOf(doc);
    if (!place || doc.state.context.intent!.external_account_id !== account || (after && !before(after, place)) || (cutoff && before(cutoff, place))) continue;
    found.set(place.payment_id, { doc, place });
  }
  const row = (doc: PaymentDoc) => paymentsProjection.table!.row(doc);
  const kept = [...found.values()].filter(({ doc }) => chosenFilters(filters).every((f) => row(doc)[FILTERS[f]] === filters[f])).sort((a, b) => (before(a.place, b.place) ? -1 : 1));
  const shown = kept.slice(0, limit);
  const has_more = kept.length > limit || cutoff !== undefined;
  return { docs: shown.map((k) => k.doc), has_more, next: kept.length > limit ? shown[shown.length - 1]!.place : (cutoff ?? null) };
}

/** The payment's place in the list's order (in the search's when q is given), for `starting_after`; undefined when it is not the account's (or q does not find it). */
export async function positionOfPayment(readModels: Pick<ReadModelStore, "get" | "query">, accountId: string, paymentId: string, q?: string): Promise<ListPosition | undefined> {
  const doc = await readModels.get<PaymentDoc>(paymentsProjection.name, paymentId);
  if (!doc || doc.state.context.intent!.external_account_id !== accountId) return undefined;
  if (q === undefined) return positionOf(doc);
  const place = checkSearch(q).placeOf(doc);
  if (!place) throw new InvalidRequest(`starting_after: q does not find ${paymentId} (give the last payment of the page before)`, "starting_after", "parameter_invalid");
  return place;
}

/** The list's cursors: its place in the order (a search's carries the matched text and a mark), sealed and bound to the account (src/cursors.ts). */
export function listCursors(key: Buffer) {
  const sealed = sealedCursors(key, "pl_");
  return {
    encode: (account: string, p: ListPosition) => sealed.seal(account, Buffer.from(JSON.stringify("created" in p ? [p.created, p.payment_id] : ["q", p.matched, p.payment_id]), "utf8")),
    decode(account: string, cursor: string): ListPosition {
      const place = sealed.open(account, cursor);
      const value: unknown = place && JSON.parse(place.toString("utf8"));
      if (Array.isArray(value) && value.every((v) => typeof v === "string")) {
        if (value.length === 2) return { created: value[0] as string, payment_id: value[1] as string };
        if (value.length === 3 && value[0] === "q") return { matched: value[1] as string, payment_id: value[2] as string };
      }
      throw new InvalidRequest("cursor: not a cursor of this account's payment list; pass the next_cursor of the page before, as it is", "cursor", "parameter_invalid");
    },
  };
}
export type ListCursors = ReturnType<typeof listCursors>;
