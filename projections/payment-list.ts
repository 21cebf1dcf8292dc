// The account's payments, newest first (created time, then payment id), read from the payments
// table through the index of the one filter asked for, a page by keyset: a request reads the rows
// it returns plus one (which says whether more follow), wherever the page is, however many
// payments the account holds. Pages stay right while payments arrive: a new payment is newer than
// every page already read, and a cursor is a position in the order, not an offset.
//
// Filters: `status`, `capture_method`, `terminal_id`, `external_customer_id`: one at a time (each
// has its index; two together would read rows to drop them). `q` finds a payment by its id or its
// external transaction id, exactly; the other filters then apply to those few payments.
import { InvalidRequest } from "../src/errors.js";
import type { ReadModelStore } from "../src/store/port.js";
import type { PaymentStatus } from "../machines/payment.js";
import { paymentsProjection, type PaymentDoc } from "./payments.js";

export interface PaymentListFilters {
  external_account_id: string;
  status?: PaymentStatus | undefined;
  capture_method?: "automatic" | "manual" | undefined;
  terminal_id?: string | undefined;
  external_customer_id?: string | undefined;
  /** A payment id or an external transaction id, matched exactly. */
  q?: string | undefined;
}

/** A place in the order: the page starts after it. */
export interface ListPosition {
  created: string;
  payment_id: string;
}

export interface PaymentPage {
  docs: PaymentDoc[];
  has_more: boolean;
  /** Where the next page starts (the last payment of this one), when has_more. */
  next: ListPosition | null;
}

const FILTERS = { status: "status", capture_method: "capture_method", terminal_id: "terminal_id", external_customer_id: "customer_id" } as const;
const ORDER = ["created", "key"] as const;

const positionOf = (doc: PaymentDoc): ListPosition => ({ created: doc.state.context.intent!.date_created, payment_id: doc.state.context.intent!.payment_id });
/** Newest first: created time, then payment id, both descending. */
const newerFirst = (a: ListPosition, b: ListPosition) => (a.created !== b.created ? (a.created < b.created ? 1 : -1) : a.payment_id < b.payment_id ? 1 : a.payment_id > b.payment_id ? -1 : 0);

export async function listPayments(readModels: ReadModelStore, filters: PaymentListFilters, { limit, after }: { limit: number; after?: ListPosition | undefined }): Promise<PaymentPage> {
  const chosen = (Object.keys(FILTERS) as (keyof typeof FILTERS)[]).filter((f) => filters[f] !== undefined);
  if (chosen.length > 1 && filters.q === undefined) {
    throw new InvalidRequest(`${chosen.join(", ")}: filter by one of status, capture_method, terminal_id, external_customer_id at a time (or add q)`, chosen[1]!, "parameter_invalid");
  }
  const where: Record<string, string> = { account: filters.external_account_id };
  for (const f of chosen) where[FILTERS[f]] = filters[f]!;
  const page = (extra: Record<string, string>) =>
    readModels.query<PaymentDoc>(paymentsProjection.name, {
      where: { ...where, ...extra },
      order: ORDER,
      direction: "desc",
      ...(after && { after: [after.created, after.payment_id] }),
      limit: limit + 1,
    });
  let docs: PaymentDoc[];
  if (filters.q === undefined) docs = await page({});
  else {
    // by reference through its index, and the one payment whose id it is (when it is another)
    const [byReference, byId] = await Promise.all([page({ reference: filters.q }), page({ key: filters.q })]);
    docs = [...byReference, ...byId.filter((d) => !byReference.some((r) => r.state.context.intent!.payment_id === d.state.context.intent!.payment_id))];
    docs.sort((a, b) => newerFirst(positionOf(a), positionOf(b)));
  }
  const has_more = docs.length > limit;
  const shown = docs.slice(0, limit);
  return { docs: shown, has_more, next: has_more ? positionOf(shown[shown.length - 1]!) : null };
}

/** The payment's place in the order, for `starting_after`; undefined when it is not the account's. */
export async function positionOfPayment(readModels: ReadModelStore, accountId: string, paymentId: string): Promise<ListPosition | undefined> {
  const doc = await readModels.get<PaymentDoc>(paymentsProjection.name, paymentId);
  return doc && doc.state.context.intent!.external_account_id === accountId ? positionOf(doc) : undefined;
}

/** An opaque cursor: the place in the order, base64url. */
export const encodeCursor = (p: ListPosition) => Buffer.from(JSON.stringify([p.created, p.payment_id])).toString("base64url");

export function decodeCursor(cursor: string): ListPosition {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (Array.isArray(value) && value.length === 2 && value.every((v) => typeof v === "string")) return { created: value[0] as string, payment_id: value[1] as string };
  } catch {
    // not JSON: refused below
  }
  throw new InvalidRequest("cursor: not a cursor of this list (use next_cursor of the page before, as it is)", "cursor", "parameter_invalid");
}
