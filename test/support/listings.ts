// Every list the API offers over a read-model store, paged through by cursor with small pages:
// the payments of each account under each filter (and q), and each customer's cards. Two stores
// that answer the same listings answer every list the same way, page by page. `expectedPayments`
// is the simple model of a payments list: filter the documents, sort them newest first
// (a search, q: by the id or reference it matched).
import { customerCardsProjection, type CustomerCardRecord } from "../../projections/customer-cards.js";
import { listPayments, type ListPosition, type PaymentListFilters } from "../../projections/payment-list.js";
import { paymentsProjection, type PaymentDoc } from "../../projections/payments.js";
import type { ReadModelStore } from "../../src/store/port.js";

const intentOf = (d: PaymentDoc) => d.state.context.intent!;

/** A payment of the model: only what the payments table and the list read. */
export interface ModelPayment {
  id: string;
  account: string;
  created: string;
  status: "requires_capture" | "succeeded" | "canceled";
  capture_method: "automatic" | "manual";
  terminal: string | null;
  customer: string | null;
  reference: string | number | null;
}

/** A payments document as the projection would hold it (only what the table and the list read). */
export const paymentDoc = (p: ModelPayment): PaymentDoc =>
  ({
    state: {
      status: p.status,
      context: {
        intent: { payment_id: p.id, external_account_id: p.account, date_created: p.created, capture_method: p.capture_method, external_customer_id: p.customer, external_transaction_id: p.reference },
        terminal: p.terminal === null ? null : { terminal_id: p.terminal, terminal_type: "A_async" },
        saved_card: null,
      },
    },
    request_id: 1,
  }) as unknown as PaymentDoc;

/** The filters worth trying on these payments: every value each filter column takes, and q by id and by reference. */
export function filtersOf(docs: readonly PaymentDoc[]): PaymentListFilters[] {
  const out: PaymentListFilters[] = [];
  for (const account of new Set(docs.map((d) => intentOf(d).external_account_id))) {
    const own = docs.filter((d) => intentOf(d).external_account_id === account);
    const values = <T>(f: (d: PaymentDoc) => T | null) => [...new Set(own.map(f))].filter((v): v is T => v !== null);
    out.push({ external_account_id: account });
    for (const status of values((d) => d.state.status)) out.push({ external_account_id: account, status: status as PaymentListFilters["status"] });
    for (const capture_method of values((d) => intentOf(d).capture_method)) out.push({ external_account_id: account, capture_method });
    for (const terminal_id of values((d) => d.state.context.terminal?.terminal_id ?? null)) out.push({ external_account_id: account, terminal_id });
    for (const external_customer_id of values((d) => d.state.context.saved_card?.external_customer_id ?? intentOf(d).external_customer_id)) out.push({ external_account_id: account, external_customer_id });
    for (const q of values((d) => intentOf(d).external_transaction_id)) out.push({ external_account_id: account, q: String(q) });
    for (const q of values((d) => intentOf(d).payment_id).slice(0, 3)) out.push({ external_account_id: account, q });
    // prefixes: of a reference, of an id
    for (const q of values((d) => intentOf(d).external_transaction_id).map(String).filter((r) => r.length > 3).slice(0, 2)) out.push({ external_account_id: account, q: q.slice(0, 3) });
    for (const q of values((d) => intentOf(d).payment_id).slice(0, 2)) out.push({ external_account_id: account, q: q.slice(0, 4) });
  }
  return out;
}

const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

/**
 * Where the document stands in the list `f` asks for, as a sortable pair: newest first (created
 * time, then id, both descending) or, with q, the smaller of its id and reference that q finds
 * (starts with q; is q when q is shorter than 3 characters), then its id. undefined: q finds neither.
 */
function placeOf(d: PaymentDoc, f: PaymentListFilters): { first: string; id: string; desc: boolean } | undefined {
  const i = intentOf(d);
  if (f.q === undefined) return { first: i.date_created, id: i.payment_id, desc: true };
  const q = f.q;
  const texts = [i.payment_id, i.external_transaction_id === null ? null : String(i.external_transaction_id)].filter((t): t is string => t !== null && ([...q].length < 3 ? t === q : t.startsWith(q)));
  return texts.length ? { first: texts.sort(byteOrder)[0]!, id: i.payment_id, desc: false } : undefined;
}
const comparePlaces = (a: NonNullable<ReturnType<typeof placeOf>>, b: NonNullable<ReturnType<typeof placeOf>>) => (a.desc ? -1 : 1) * (byteOrder(a.first, b.first) || byteOrder(a.id, b.id));

/**
 * Whether a search's pages may end short though more follow: with a filter besides q, or when q
 * finds a payment by its id and by its reference (it is read by both ranges, kept at its first place).
 */
export function shortPagesPossible(docs: readonly PaymentDoc[], f: PaymentListFilters): boolean {
  if (f.q === undefined) return false;
  if (Object.keys(f).length > 2) return true;
  const finds = (t: string) => ([...f.q!].length < 3 ? t === f.q : t.startsWith(f.q!));
  return docs.some((d) => intentOf(d).external_account_id === f.external_account_id && finds(intentOf(d).payment_id) && intentOf(d).external_transaction_id !== null && finds(String(intentOf(d).external_transaction_id)));
}

/** Whether the document comes after the cursor's position in the list `f` asks for. */
export function isPast(d: PaymentDoc, f: PaymentListFilters, after: ListPosition): boolean {
  const place = placeOf(d, f)!;
  const cursor = { first: "created" in after ? after.created : after.matched, id: after.payment_id, desc: place.desc };
  return comparePlaces(cursor, place) < 0;
}

/** The model: the documents the filters select, newest first (created time, then id); with q, in the search's order. */
export function expectedPayments(docs: readonly PaymentDoc[], f: PaymentListFilters): string[] {
  return docs
    .filter((d) => {
      const i = intentOf(d);
      const customer = d.state.context.saved_card?.external_customer_id ?? i.external_customer_id;
      return (
        i.external_account_id === f.external_account_id &&
        (f.status === undefined || d.state.status === f.status) &&
        (f.capture_method === undefined || i.capture_method === f.capture_method) &&
        (f.terminal_id === undefined || d.state.context.terminal?.terminal_id === f.terminal_id) &&
        (f.external_customer_id === undefined || customer === f.external_customer_id) &&
        placeOf(d, f) !== undefined
      );
    })
    .map((d) => placeOf(d, f)!)
    .sort(comparePlaces)
    .map((p) => p.id);
}

/** The list, page by page through next cursors: its pages' payment ids. */
export async function pagesOf(readModels: ReadModelStore, filters: PaymentListFilters, limit: number): Promise<string[][]> {
  const pages: string[][] = [];
  let after: ListPosition | undefined;
  for (;;) {
    const page = await listPayments(readModels, filters, { limit, after });
    pages.push(page.docs.map((d) => intentOf(d).payment_id));
    if (!page.has_more) return pages;
    after = page.next!;
  }
}

/** Every listing, as one comparable value. */
export async function listings(readModels: ReadModelStore): Promise<string> {
  const docs = await readModels.list<PaymentDoc>(paymentsProjection.name, "");
  const payments = await Promise.all(filtersOf(docs).map(async (f) => ({ f, pages: await pagesOf(readModels, f, 2) })));
  const cards = await readModels.list<CustomerCardRecord>(customerCardsProjection.name, "");
  const customers = [...new Set(cards.map((c) => `${c.external_account_id}/${c.external_customer_id}/`))];
  const byCustomer = await Promise.all(customers.map(async (prefix) => ({ prefix, cards: (await readModels.list<CustomerCardRecord>(customerCardsProjection.name, prefix)).map((c) => c.payment_method_id) })));
  return JSON.stringify({ payments, byCustomer });
}
