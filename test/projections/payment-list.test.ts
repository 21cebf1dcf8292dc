// The payments list against a simple model (fast-check), on every store: for random payments and
// a random filter (or q), paging through by cursor gives exactly the documents the filter selects,
// newest first, each once; with payments arriving between pages (newer ones, and older ones from a
// process whose clock is behind) every payment present at the start is listed exactly once, pages
// stay in order, and nothing else appears but the arrivals. The page reads its rows through the
// filter's index: the plans are checked on SQLite and PostgreSQL.
import fc from "fast-check";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { listPayments, type ListPosition, type PaymentListFilters } from "../../projections/payment-list.js";
import { paymentsProjection, type PaymentDoc } from "../../projections/payments.js";
import { InvalidRequest } from "../../src/errors.js";
import { createMemoryReadModels } from "../../src/store/memory/index.js";
import type { ReadModelStore } from "../../src/store/port.js";
import { createPostgresStore } from "../../src/store/postgres/index.js";
import { createSqliteStore, readModelsPath } from "../../src/store/sqlite/index.js";
import { testDatabase } from "../support/postgres.js";
import { expectedPayments } from "../support/listings.js";

interface P {
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
const docOf = (p: P): PaymentDoc =>
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

const payment = (ns: string) =>
  fc.record({
    id: fc.integer({ min: 0, max: 10_000 }).map((n) => `pi_${String(n).padStart(5, "0")}`),
    account: fc.constantFrom("a", "b").map((a) => `${ns}${a}`),
    // few distinct times: many ties, broken by the id
    created: fc.integer({ min: 0, max: 5 }).map((m) => `2026-01-01T00:0${m}:00.000+00:00`),
    status: fc.constantFrom("requires_capture", "succeeded", "canceled"),
    capture_method: fc.constantFrom("automatic", "manual"),
    terminal: fc.constantFrom(null, "tmr_1", "tmr_2"),
    customer: fc.constantFrom(null, "cus_1", "cus_2"),
    reference: fc.constantFrom(null, "ord-1", "ord-2", 7),
  }) as fc.Arbitrary<P>;

const filters = (ns: string) =>
  fc.oneof(
    fc.constant({}),
    fc.constantFrom("requires_capture", "succeeded", "canceled").map((status) => ({ status })),
    fc.constantFrom("automatic", "manual").map((capture_method) => ({ capture_method })),
    fc.constantFrom("tmr_1", "tmr_2").map((terminal_id) => ({ terminal_id })),
    fc.constantFrom("cus_1", "cus_2").map((external_customer_id) => ({ external_customer_id })),
    fc.constantFrom("ord-1", "7", "pi_00001", "pi_00002").map((q) => ({ q })),
    fc.constantFrom("ord-1", "7").map((q) => ({ q, status: "succeeded" as const })),
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
        await readModels.prepare(paymentsProjection.name, { version: paymentsProjection.version!, table: paymentsProjection.table! });
      }
      return readModels;
    };
    afterAll(async () => readModels?.close());

    it("pages through by cursor to exactly the model's list, newest first", async () => {
      const rm = await store();
      await fc.assert(
        fc.asyncProperty(
          fc.string({ minLength: 6, maxLength: 6, unit: fc.constantFrom(..."abcdefghij") }).chain((ns) => fc.tuple(fc.array(payment(`${ns}_`), { maxLength: 40 }), filters(`${ns}_`), fc.integer({ min: 1, max: 7 }))),
          async ([payments, f, limit]) => {
            // a namespace per run: the runs share one store
            const unique = [...new Map(payments.map((p) => [p.id + p.account, p])).values()].map((p) => ({ ...p, id: `${p.id}_${p.account}` }));
            await put(rm, unique, ++checkpoint);
            const pages: string[][] = [];
            let after: ListPosition | undefined;
            for (;;) {
              const page = await listPayments(rm, f, { limit, after });
              expect(page.docs.length).toBeLessThanOrEqual(limit);
              if (page.has_more) expect(page.docs.length).toBe(limit);
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
          fc.string({ minLength: 6, maxLength: 6, unit: fc.constantFrom(..."klmnopqrst") }).chain((ns) =>
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

    it("refuses two filters at once (each has its index), but not a filter with q", async () => {
      const rm = await store();
      const twice = await listPayments(rm, { external_account_id: "x", status: "succeeded", terminal_id: "tmr_1" }, { limit: 5 }).catch((e: unknown) => e);
      expect(twice).toBeInstanceOf(InvalidRequest);
      expect(twice).toMatchObject({ status: 400, param: "terminal_id" });
      await expect(listPayments(rm, { external_account_id: "x", status: "succeeded", q: "ord-1" }, { limit: 5 })).resolves.toMatchObject({ docs: [] });
    });
  });
}

listContract("memory", async () => createMemoryReadModels(), 60);

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

describe("a page reads its rows through the filter's index, never sorting or scanning", () => {
  const queries: Array<[string, string[]]> = [
    ["account", []],
    ["status", ["status"]],
    ["capture_method", ["capture_method"]],
    ["terminal_id", ["terminal_id"]],
    ["customer_id", ["customer_id"]],
    ["reference", ["reference"]],
  ];
  const sql = (filter: string[], param: (i: number) => string) => {
    const where = ["account", ...filter].map((c, i) => `${c} = ${param(i)}`);
    const n = where.length;
    return `SELECT doc FROM rm_payment_states WHERE ${where.join(" AND ")} AND (created, key) < (${param(n)}, ${param(n + 1)}) ORDER BY created DESC, key DESC LIMIT ${param(n + 2)}`;
  };

  it("SQLite: each list's plan searches one index by its equality columns and the keyset, without a temporary sort", async () => {
    const path = join(dir, "plans.sqlite");
    const { events, readModels } = createSqliteStore({ path });
    await readModels.prepare(paymentsProjection.name, { version: paymentsProjection.version!, table: paymentsProjection.table! });
    await Promise.all([events.close(), readModels.close()]);
    const db = new Database(readModelsPath(path), { readonly: true });
    try {
      for (const [name, filter] of queries) {
        const plan = db
          .prepare(`EXPLAIN QUERY PLAN ${sql(filter, () => "?")}`)
          .all(...Array.from({ length: filter.length + 4 }, (_, i) => (i === filter.length + 3 ? 21 : "x")))
          .map((r) => (r as { detail: string }).detail);
        expect(plan, name).toHaveLength(1);
        expect(plan[0], name).toMatch(new RegExp(`^SEARCH rm_payment_states USING INDEX rm_payment_states_\\d \\(${["account", ...filter].map((c) => `${c}=\\?`).join(" AND ")} AND \\(created,key\\)<\\(\\?,\\?\\)\\)$`));
      }
    } finally {
      db.close();
    }
  });

  it("PostgreSQL: with 20,000 payments in one account, a deep page reads the page's rows plus one", async () => {
    const planSchema = `t_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
    const { events, readModels } = await createPostgresStore({ connectionString: database, schema: planSchema });
    await readModels.prepare(paymentsProjection.name, { version: paymentsProjection.version!, table: paymentsProjection.table! });
    const statuses = ["requires_capture", "succeeded", "canceled"] as const;
    for (let batch = 0; batch < 4; batch++) {
      const docs = Array.from({ length: 5_000 }, (_, i) => {
        const n = batch * 5_000 + i;
        const p: P = { id: `pi_${String(n).padStart(6, "0")}`, account: "big", created: `2026-01-01T00:00:${String(n % 60).padStart(2, "0")}.${String(n).padStart(6, "0")}`, status: statuses[n % 3]!, capture_method: n % 2 ? "manual" : "automatic", terminal: `tmr_${n % 5}`, customer: `cus_${n % 7}`, reference: `ord-${n % 11}` };
        return { key: p.id, doc: docOf(p) };
      });
      await readModels.commitBatch([{ projection: paymentsProjection.name, docs, checkpoint: batch + 1 }]);
    }
    const c = new pg.Client({ connectionString: database, options: `-c search_path=${planSchema}` });
    await c.connect();
    try {
      await c.query("ANALYZE rm_payment_states");
      const values = (filter: string[]) => ["big", ...filter.map((f) => ({ status: "succeeded", capture_method: "manual", terminal_id: "tmr_3", customer_id: "cus_4", reference: "ord-5" })[f]), "2026-01-01T00:00:30", "pi_010000", 21];
      for (const [name, filter] of queries) {
        const { rows } = await c.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql(filter, (i) => `$${i + 1}`)}`, values(filter));
        const plan = (rows[0] as { "QUERY PLAN": [{ Plan: Record<string, any> }] })["QUERY PLAN"][0].Plan;
        const scan = plan.Plans?.[0] ?? plan;
        expect(plan["Node Type"], name).toBe("Limit");
        expect(scan["Node Type"], name).toBe("Index Scan");
        expect(scan["Actual Rows"], name).toBeLessThanOrEqual(21);
        expect(scan["Rows Removed by Filter"] ?? 0, name).toBe(0);
      }
    } finally {
      await c.end();
      await Promise.all([events.close(), readModels.close()]);
    }
  });
});
