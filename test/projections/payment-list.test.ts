// The payments list against a simple model (fast-check), on every store: for random payments and
// a random filter (or q: a search by the start of ids and references, or a whole short one),
// paging through by cursor gives exactly the documents the filter selects, newest first (a
// search: by the text it matched, then id), each once; with payments arriving between pages (newer ones, and older ones from a
// process whose clock is behind) every payment present at the start is listed exactly once, pages
// stay in order, and nothing else appears but the arrivals; with inserts, status changes and pages
// interleaved at random, every page is exactly the model's page after the cursor at that moment.
// That each page reads its rows through the filter's index is ./list-plans.test.ts.
import fc from "fast-check";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { listPayments, type ListPosition, type PaymentListFilters } from "../../projections/payment-list.js";
import { paymentsProjection, type PaymentDoc } from "../../projections/payments.js";
import { InvalidRequest } from "../../src/errors.js";
import { createMemoryReadModels } from "../../src/store/memory/index.js";
import type { ReadModelStore } from "../../src/store/port.js";
import { createPostgresStore } from "../../src/store/postgres/index.js";
import { createSqliteStore } from "../../src/store/sqlite/index.js";
import { testDatabase } from "../support/postgres.js";
import { expectedPayments, isPast, paymentDoc as docOf, shortPagesPossible, type ModelPayment as P } from "../support/listings.js";
import { readModelShape } from "../../projections/projection.js";

const payment = (ns: string) =>
  fc.record({
    id: fc.integer({ min: 0, max: 999 }).map((n) => `pi_${String(n).padStart(5, "0")}`),
    account: fc.constantFrom("a", "b").map((a) => `${ns}${a}`),
    // few distinct times: many ties, broken by the id
    created: fc.integer({ min: 0, max: 5 }).map((m) => `2026-01-01T00:0${m}:00.000+00:00`),
    status: fc.constantFrom("requires_capture", "succeeded", "canceled"),
    capture_method: fc.constantFrom("automatic", "manual"),
    terminal: fc.constantFrom(null, "tmr_1", "tmr_2"),
    customer: fc.constantFrom(null, "cus_1", "cus_2"),
    // references that share starts ("ord-1" starts "ord-10"), differ in case only, and look like
    // ids (a search by "pi_0..." then reads both indexes, their places interleaved)
    reference: fc.oneof(fc.constantFrom(null, "ord-1", "ord-2", "ord-10", "ORD-1", 7), fc.integer({ min: 0, max: 999 }).map((n) => `pi_00${n}`)),
  }) as fc.Arbitrary<P>;

const filters = (ns: string) =>
  fc.oneof(
    fc.constant({}),
    fc.constantFrom("requires_capture", "succeeded", "canceled").map((status) => ({ status })),
    fc.constantFrom("automatic", "manual").map((capture_method) => ({ capture_method })),
    fc.constantFrom("tmr_1", "tmr_2").map((terminal_id) => ({ terminal_id })),
    fc.constantFrom("cus_1", "cus_2").map((external_customer_id) => ({ external_customer_id })),
    fc.constantFrom("ord-1", "7", "pi_00001", "pi_00002").map((q) => ({ q })),
    // prefixes (3 characters or more) of references, of ids, of both; short ones match whole
    fc.constantFrom("ord", "ord-1", "ORD", "pi_", "pi_00", "pi_001", "pi_0042", "or", "pi").map((q) => ({ q })),
    fc.tuple(fc.constantFrom("ord-1", "7", "ord", "pi_00", "pi_001"), fc.constantFrom("requires_capture", "succeeded", "canceled")).map(([q, status]) => ({ q, status })),
    fc.constantFrom("ord", "pi_").map((q) => ({ q, capture_method: "manual" as const, terminal_id: "tmr_1" })),
  ).chain((f) => fc.constantFrom("a", "b").map((a) => ({ external_account_id: `${ns}${a}`, ...f }) as PaymentListFilters));

async function put(readModels: ReadModelStore, payments: P[], checkpoint: number) {
  const byId = new Map(payments.map((p) => [p.id, p])); // one document per key, the last wins
  await readModels.commitBatch([{ projection: paymentsProjection.name, docs: [...byId.values()].map((p) => ({ key: p.id, doc: docOf(p) })), checkpoint }]);
}

function listContract(name: string, open: () => Promise<ReadModelStore>, numRuns: number) {
  describe(`payments list: ${name}`, () => {
    let readModels: ReadModelStore;
    let checkpoint = 0;
    const store = async () => {
      if (!readModels) {
        readModels = await open();
        await readModels.prepare(paymentsProjection.name, readModelShape(paymentsProjection));
      }
      return readModels;
    };
    afterAll(async () => readModels?.close());

    it("pages through by cursor to exactly the model's list, newest first", async () => {
      const rm = await store();
      await fc.assert(
        fc.asyncProperty(
          fc.string({ minLength: 10, maxLength: 10, unit: fc.constantFrom(..."abcdefghij") }).chain((ns) => fc.tuple(fc.array(payment(`${ns}_`), { maxLength: 40 }), filters(`${ns}_`), fc.integer({ min: 1, max: 7 }))),
          async ([payments, f, limit]) => {
            // a namespace per run (10 letters: 300 runs never draw one twice): the runs share one store
            const unique = [...new Map(payments.map((p) => [p.id + p.account, p])).values()].map((p) => ({ ...p, id: `${p.id}_${p.account}` }));
            await put(rm, unique, ++checkpoint);
            const pages: string[][] = [];
            let after: ListPosition | undefined;
            for (;;) {
              const page = await listPayments(rm, f, { limit, after });
              expect(page.docs.length).toBeLessThanOrEqual(limit);
              // a search may end a page short (it reads limit + 1 per index range; a filter keeps some, a payment found twice counts once)
              if (page.has_more && !shortPagesPossible(unique.map(docOf), f)) expect(page.docs.length).toBe(limit);
              pages.push(page.docs.map((d) => d.state.context.intent!.payment_id));
              if (!page.has_more) break;
              after = page.next!;
            }
            expect(pages.flat()).toEqual(expectedPayments(unique.map(docOf), f));
          },
        ),
        { numRuns },
      );
    });

    it("with payments arriving between pages: everything there at the start exactly once, in order, nothing but arrivals besides", async () => {
      const rm = await store();
      await fc.assert(
        fc.asyncProperty(
          fc.string({ minLength: 10, maxLength: 10, unit: fc.constantFrom(..."klmnopqrst") }).chain((ns) =>
            fc.tuple(fc.array(payment(`${ns}_`), { minLength: 1, maxLength: 30 }), fc.array(fc.array(payment(`${ns}_`), { maxLength: 4 }), { maxLength: 10 }), filters(`${ns}_`), fc.integer({ min: 1, max: 4 })),
          ),
          async ([initial, arrivals, f, limit]) => {
            let serial = 0;
            const named = (ps: P[]) => ps.map((p) => ({ ...p, id: `${p.id}_${p.account}_${serial++}` }));
            const start = named(initial);
            await put(rm, start, ++checkpoint);
            const expected = expectedPayments(start.map(docOf), f);
            const arrived = new Set<string>();
            const seen: string[] = [];
            let after: ListPosition | undefined;
            for (let i = 0; ; i++) {
              const page = await listPayments(rm, f, { limit, after });
              seen.push(...page.docs.map((d) => d.state.context.intent!.payment_id));
              if (!page.has_more) break;
              after = page.next!;
              // another process appends meanwhile: newer payments, or older ones (its clock behind)
              const more = named(arrivals[i % Math.max(1, arrivals.length)] ?? []);
              for (const p of more) arrived.add(p.id);
              if (more.length) await put(rm, more, ++checkpoint);
            }
            expect(new Set(seen).size).toBe(seen.length);
            for (const id of expected) expect(seen).toContain(id);
            for (const id of seen) expect(expected.includes(id) || arrived.has(id)).toBe(true);
            // in order: the list's order restricted to what was seen
            const order = expectedPayments((await rm.list<PaymentDoc>(paymentsProjection.name, "")).filter((d) => seen.includes(d.state.context.intent!.payment_id)), f);
            expect(seen).toEqual(order);
          },
        ),
        { numRuns },
      );
    });

    it("inserts, status changes and pages interleaved at random: each page is the model's page after the cursor at that moment", async () => {
      const rm = await store();
      const step = (ns: string) =>
        fc.oneof(
          { arbitrary: fc.constant({ kind: "page" as const }), weight: 3 },
          fc.array(payment(ns), { minLength: 1, maxLength: 4 }).map((payments) => ({ kind: "insert" as const, payments })),
          fc.tuple(fc.array(fc.nat(), { minLength: 1, maxLength: 3 }), fc.constantFrom("requires_capture", "succeeded", "canceled")).map(([picks, status]) => ({ kind: "update" as const, picks, status })),
        );
      await fc.assert(
        fc.asyncProperty(
          fc.string({ minLength: 10, maxLength: 10, unit: fc.constantFrom(..."uvwxyzabcd") }).chain((ns) =>
            fc.tuple(fc.array(payment(`${ns}_`), { maxLength: 25 }), fc.array(step(`${ns}_`), { maxLength: 30 }), filters(`${ns}_`), fc.integer({ min: 1, max: 4 })),
          ),
          async ([initial, steps, f, limit]) => {
            let serial = 0;
            const model = new Map<string, P>();
            const write = async (ps: P[]) => {
              for (const p of ps) model.set(p.id, p);
              if (ps.length) await put(rm, ps, ++checkpoint);
            };
            const named = (ps: P[]) => ps.map((p) => ({ ...p, id: `${p.id}_${p.account}_${serial++}` }));
            await write(named(initial));
            const atStart = expectedPayments([...model.values()].map(docOf), f);
            const changed = new Set<string>();
            const seen: string[] = [];
            let after: ListPosition | undefined;
            let done = false;
            const nextPage = async () => {
              const page = await listPayments(rm, f, { limit, after });
              const rest = expectedPayments([...model.values()].map(docOf), f).filter((id) => !after || isPast(docOf(model.get(id)!), f, after));
              const ids = page.docs.map((d) => d.state.context.intent!.payment_id);
              if (shortPagesPossible([...model.values()].map(docOf), f)) {
                // the model's next payments, maybe fewer than limit; all of them on the last page
                expect(ids.length).toBeLessThanOrEqual(limit);
                expect(ids).toEqual(rest.slice(0, ids.length));
                if (!page.has_more) expect(ids).toEqual(rest);
              } else {
                expect(ids).toEqual(rest.slice(0, limit));
                expect(page.has_more).toBe(rest.length > limit);
              }
              seen.push(...ids);
              if (page.has_more) after = page.next!;
              else done = true;
            };
            for (const s of steps) {
              if (done) break;
              if (s.kind === "page") await nextPage();
              else if (s.kind === "insert") await write(named(s.payments));
              else if (model.size > 0) {
                const ids = [...model.keys()];
                const picked = s.picks.map((n) => ids[n % ids.length]!);
                for (const id of picked) changed.add(id);
                await write(picked.map((id) => ({ ...model.get(id)!, status: s.status as P["status"] })));
              }
            }
            while (!done) await nextPage();
            // no duplicates; no skips of a payment there at the start (and left unchanged)
            expect(new Set(seen).size).toBe(seen.length);
            for (const id of atStart) if (!changed.has(id)) expect(seen).toContain(id);
          },
        ),
        { numRuns },
      );
    });

    it("refuses two filters at once (each has its index), but not a filter with q", async () => {
      const rm = await store();
      const twice = await listPayments(rm, { external_account_id: "x", status: "succeeded", terminal_id: "tmr_1" }, { limit: 5 }).catch((e: unknown) => e);
      expect(twice).toBeInstanceOf(InvalidRequest);
      expect(twice).toMatchObject({ status: 400, param: "terminal_id" });
      await expect(listPayments(rm, { external_account_id: "x", status: "succeeded", q: "ord-1" }, { limit: 5 })).resolves.toMatchObject({ docs: [] });
    });
  });
}

listContract("memory", async () => createMemoryReadModels(), 300);

const dir = mkdtempSync(join(tmpdir(), "cardflow-list-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
listContract(
  "sqlite",
  async () => {
    const { events, readModels } = createSqliteStore({ path: join(dir, "list.sqlite") });
    await events.close();
    return readModels;
  },
  60,
);

const database = await testDatabase();
const schema = `t_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
listContract(
  "postgres",
  async () => {
    const { events, readModels } = await createPostgresStore({ connectionString: database, schema });
    await events.close();
    return readModels;
  },
  25,
);
