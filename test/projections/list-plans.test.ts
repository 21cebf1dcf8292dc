// No list reads more rows than it returns plus one. The statements are not written here: every
// list the API makes is run through its real code (the payments list with each filter, q by
// reference and by id, starting_after, each with and without a cursor; the terminals of an
// account; a customer's cards; a card found by its token; the webhook event feed of all, of an
// account and of a payment, and an entry by its position) against a store holding many accounts,
// the statements the store sends are recorded, and each one's plan is checked:
// - SQLite (EXPLAIN QUERY PLAN): one SEARCH through an index whose constraint names every column
//   the statement compares; no SCAN, no temporary B-tree (a sort the index does not serve).
// - PostgreSQL (EXPLAIN (ANALYZE, FORMAT JSON)), as a custom plan and as the generic plan the
//   named statements settle on: index scans only (no Seq Scan; no Sort or Bitmap scan, but in a
//   list that returns all it matches: one without a limit, or fewer rows than its limit), no row
//   removed by a filter, and no scan reading more rows than the statement returns plus one.
// A lookup by the unique key (a short q, whole, by payment id) reads one row at most: only that is
// checked of it. A search (q) reads two index ranges, (account, key) and (account, reference, key),
// from q (or the cursor) to q's end, limit + 1 rows each: each statement is checked as above (the
// other filters of a search apply to the rows read, in the code, and add no statement).
import { randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { customerCardKey, customerCardsProjection, type CustomerCardRecord } from "../../projections/customer-cards.js";
import { listCursors, listPayments, positionOfPayment, type PaymentListFilters } from "../../projections/payment-list.js";
import { paymentsProjection } from "../../projections/payments.js";
import { readModelShape, type Projection } from "../../projections/projection.js";
import { terminalKey, terminalsProjection, type TerminalRecord } from "../../projections/terminals.js";
import { listCustomerCardsHandler, listTerminalsHandler } from "../../src/engine/handlers/accounts.js";
import type { Account } from "../../src/engine/lookups/accounts.js";
import { createStoredCards } from "../../src/engine/lookups/stored-cards.js";
import type { Processors } from "../../src/processors/port.js";
import type { EventStore, ReadModelStore } from "../../src/store/port.js";
import { createPostgresStore } from "../../src/store/postgres/index.js";
import { createSqliteStore, readModelsPath } from "../../src/store/sqlite/index.js";
import { createEventFeed, FEED, feedKey, type FeedEntry } from "../../src/webhooks/feed.js";
import { testDatabase } from "../support/postgres.js";
import { paymentDoc, type ModelPayment } from "../support/listings.js";

const LIMIT = 20;
const STATUSES = ["requires_capture", "succeeded", "canceled"] as const;

/** One big account (most payments), many small ones; terminals and cards across many accounts. */
async function fill(rm: ReadModelStore) {
  for (const p of [paymentsProjection, terminalsProjection, customerCardsProjection] as Projection<any>[]) await rm.prepare(p.name, readModelShape(p));
  let checkpoint = 0;
  for (let batch = 0; batch < 4; batch++) {
    const docs = Array.from({ length: 5_000 }, (_, i) => {
      const n = batch * 5_000 + i;
      const p: ModelPayment = {
        id: `pi_${String(n).padStart(6, "0")}`,
        account: n % 4 === 0 ? `acct_${n % 400}` : "big",
        created: `2026-01-01T00:${String(Math.floor(n / 600) % 60).padStart(2, "0")}:${String(n % 60).padStart(2, "0")}.000+00:00`,
        status: STATUSES[n % 3]!,
        capture_method: n % 2 ? "manual" : "automatic",
        terminal: n % 5 === 0 ? null : `tmr_${n % 13}`,
        customer: `cus_${n % 17}`,
        reference: n % 3 === 0 ? `ord-${n % 29}` : n,
      };
      return { key: p.id, doc: paymentDoc(p) };
    });
    await rm.commitBatch([{ projection: paymentsProjection.name, docs, checkpoint: ++checkpoint }]);
  }
  const terminals = Array.from({ length: 3_000 }, (_, n): { key: string; doc: TerminalRecord } => {
    const doc = { terminal_id: `tmr_${n}`, external_account_id: `acct_${n % 300}`, terminal_type: "A_async", label: null, serial_number: null, date_created: "2026-01-01T00:00:00.000+00:00" } as TerminalRecord;
    return { key: terminalKey(doc.external_account_id, doc.terminal_id), doc };
  });
  const cards = Array.from({ length: 5_000 }, (_, n): { key: string; doc: CustomerCardRecord } => {
    const doc: CustomerCardRecord = {
      payment_method_id: `pm_${String(n).padStart(5, "0")}`,
      external_account_id: n % 2 ? "big" : `acct_${n % 300}`,
      external_customer_id: `cus_${n % 50}`,
      brand: "visa",
      last_4: "4242",
      exp_month: "12",
      exp_year: 2030,
      cardholder_name: null,
      funding: "credit",
      payment_id: `pi_${n}`,
      date_created: "2026-01-01T00:00:00.000+00:00",
    };
    return { key: customerCardKey(doc.external_account_id, doc.external_customer_id, doc.payment_method_id), doc };
  });
  await rm.commitBatch([
    { projection: terminalsProjection.name, docs: terminals, checkpoint },
    { projection: customerCardsProjection.name, docs: cards, checkpoint },
  ]);
  // the webhook feed: 20,000 public events, most of the big account, a few per payment
  await feedOf(rm).entries("all", 0, 1); // its table prepared on this handle
  const entries = Array.from({ length: 20_000 }, (_, n): { key: string; doc: FeedEntry } => {
    const position = n + 1;
    const payment_id = n % 10 === 0 ? null : `pi_${String(n % 5_000).padStart(6, "0")}`;
    const event = { id: `evt_${position}`, object: "event" as const, type: "payment_intent.created" as const, created: "2026-01-01T00:00:00.000+00:00", external_account_id: n % 4 === 0 ? `acct_${n % 400}` : "big", payment_id, sequence: 1, request_id: n, data: { object: {} } };
    return { key: feedKey(position), doc: { position, stream: `payment-${payment_id ?? n}`, event } };
  });
  await rm.commitBatch([{ projection: FEED.events, docs: entries, checkpoint }]);
}

/** The webhook feed's reads over these read models (its store is never read by them). */
// one feed per handle: its first preparation (read models past the head) is not among the lists' statements
const feeds = new Map<ReadModelStore, ReturnType<typeof createEventFeed>>();
const feedOf = (rm: ReadModelStore) => feeds.get(rm) ?? feeds.set(rm, createEventFeed({ store: { head: async () => Number.MAX_SAFE_INTEGER } as unknown as EventStore, readModels: rm })).get(rm)!;

/** Every list the API makes, through its own code (each payments list twice: its first page, and its next page by cursor). */
async function everyList(rm: ReadModelStore) {
  const filters: PaymentListFilters[] = [
    { external_account_id: "big" },
    { external_account_id: "big", status: "succeeded" },
    { external_account_id: "big", capture_method: "manual" },
    { external_account_id: "big", terminal_id: "tmr_3" },
    { external_account_id: "big", external_customer_id: "cus_4" },
    // searches: by the start of a reference (few, many), of an id (one, many, every one: "pi_"),
    // interleaved ("1": references 1, 10, 100... beside no id), with filters, and whole (shorter than 3)
    { external_account_id: "big", q: "ord-5" },
    { external_account_id: "big", q: "ord" },
    { external_account_id: "big", q: "pi_000101" },
    { external_account_id: "big", q: "pi_0001" },
    { external_account_id: "big", q: "pi_" },
    { external_account_id: "big", q: "123" },
    { external_account_id: "big", q: "ord-5", status: "canceled" },
    { external_account_id: "big", q: "pi_00", capture_method: "manual", terminal_id: "tmr_3" },
    { external_account_id: "big", q: "7" },
    { external_account_id: "big", q: "pi" },
    { external_account_id: "acct_8" },
  ];
  const cursors = listCursors(randomBytes(32));
  for (const f of filters) {
    const first = await listPayments(rm, f, { limit: LIMIT });
    if (first.next) await listPayments(rm, f, { limit: LIMIT, after: cursors.decode(f.external_account_id, cursors.encode(f.external_account_id, first.next)) });
  }
  // starting_after: the payment's place, then the page after it
  const after = await positionOfPayment(rm, "big", "pi_010001");
  expect(after).toBeDefined();
  await listPayments(rm, { external_account_id: "big" }, { limit: LIMIT, after });
  const found = await positionOfPayment(rm, "big", "pi_010001", "pi_01");
  expect(found).toEqual({ matched: "pi_010001", payment_id: "pi_010001" });
  await listPayments(rm, { external_account_id: "big", q: "pi_01" }, { limit: LIMIT, after: found });

  const deps = { accounts: { getAccount: async () => ({}) as Account }, projections: { fresh: rm } };
  expect(await listTerminalsHandler(deps as never)("acct_7")).toHaveLength(10);
  expect(await listCustomerCardsHandler(deps as never)("big", "cus_3")).toHaveLength(100);
  const processors = { get: () => ({ retrieveStoredCard: async () => undefined }) } as unknown as Processors;
  const { findStoredCard } = createStoredCards({ payments: { load: async () => undefined }, readModels: rm, projections: { ready: async () => undefined, caughtUp: async () => 0 }, processors, cacheSize: 10 });
  expect(await findStoredCard({ external_account_id: "big", processor: "a" } as unknown as Account, "cus_3", "pm_00053")).toMatchObject({ card: { last_4: "4242" } });

  // the feed: GET /v2/events (an account's, a payment's), webhook scans (an account's), `events tail` (all), a delivery's entry
  const feed = feedOf(rm);
  expect(await feed.entries("all", 15_000, LIMIT)).toHaveLength(LIMIT);
  expect(await feed.entries({ account: "big" }, 0, LIMIT)).toHaveLength(LIMIT);
  expect(await feed.entries({ account: "big" }, 12_345, LIMIT)).toHaveLength(LIMIT);
  expect((await feed.entries({ account: "big", payment_id: "pi_000123" }, 0, LIMIT)).map((e) => e.position)).toEqual([124, 5_124, 10_124, 15_124]);
  expect((await feed.entry(777))?.position).toBe(777);
}

/** What the lists above must have sent (so a list that stopped reaching the store is noticed). */
function expectEveryList(sql: "sqlite" | "postgres", texts: string[]) {
  const p = (s: string) => s.replace(/\$\d+/g, "?");
  const sent = texts.map(p);
  const param = "\\?";
  // an order by the key alone: PostgreSQL's, and its keyset, are led by the equality columns (src/store/postgres/tables.ts)
  const byKeyOrder = (equal: string) => (sql === "postgres" ? `${equal}, ` : "");
  const wanted = [
    ...["", ...["status", "capture_method", "terminal_id", "customer_id"].map((c) => ` AND ${c} = ${param}`)].flatMap((filter) => [
      `FROM rm_payment_states_v4 WHERE account = ${param}${filter} ORDER BY created DESC, key DESC LIMIT`,
      `FROM rm_payment_states_v4 WHERE account = ${param}${filter} AND \\(created, key\\) < \\(${param}, ${param}\\) ORDER BY created DESC, key DESC LIMIT`,
    ]),
    // a search: the two ranges from their start, and past a cursor (PostgreSQL: the id's as row values led by the account); whole (a short q)
    ...(sql === "sqlite"
      ? [
          `FROM rm_payment_states_v4 WHERE account = ${param} AND key >= ${param} AND key < ${param} ORDER BY key LIMIT`,
          `FROM rm_payment_states_v4 WHERE account = ${param} AND key < ${param} AND \\(key\\) > \\(${param}\\) ORDER BY key LIMIT`,
          `FROM rm_payment_states_v4 WHERE account = ${param} AND reference >= ${param} AND reference < ${param} ORDER BY reference, key LIMIT`,
          `FROM rm_payment_states_v4 WHERE account = ${param} AND reference < ${param} AND \\(reference, key\\) > \\(${param}, ${param}\\) ORDER BY reference, key LIMIT`,
        ]
      : [
          `FROM rm_payment_states_v4 WHERE \\(account, key\\) >= \\(${param}, ${param}\\) AND \\(account, key\\) < \\(${param}, ${param}\\) ORDER BY account, key LIMIT`,
          `FROM rm_payment_states_v4 WHERE \\(account, key\\) < \\(${param}, ${param}\\) AND \\(account, key\\) > \\(${param}, ${param}\\) ORDER BY account, key LIMIT`,
          `FROM rm_payment_states_v4 WHERE account = ${param} AND reference >= ${param} AND reference < ${param} ORDER BY reference, key LIMIT`,
          `FROM rm_payment_states_v4 WHERE account = ${param} AND reference < ${param} AND \\(reference, key\\) > \\(${param}, ${param}\\) ORDER BY reference, key LIMIT`,
        ]),
    `FROM rm_payment_states_v4 WHERE account = ${param} AND reference = ${param} ORDER BY ${byKeyOrder("account, reference")}key LIMIT`,
    `FROM rm_payment_states_v4 WHERE account = ${param} AND key = ${param} ORDER`,
    `FROM rm_payment_states_v4 WHERE key = ${param}$`,
    `FROM read_models WHERE projection = ${param} AND key >= ${param} AND key < ${param} AND key > ${param} ORDER BY key`,
    `FROM rm_customer_cards_v3 WHERE key >= ${param}`,
    `FROM rm_customer_cards_v3 WHERE account = ${param} AND payment_method_id = ${param} ORDER BY ${byKeyOrder("account, payment_method_id")}key`,
    `FROM rm_feed_entries WHERE key >= ${param} AND key > ${param} ORDER BY key LIMIT`,
    `FROM rm_feed_entries WHERE account = ${param} AND \\(${byKeyOrder("account")}key\\) > \\(${sql === "postgres" ? `${param}, ` : ""}${param}\\) ORDER BY ${byKeyOrder("account")}key LIMIT`,
    `FROM rm_feed_entries WHERE payment_id = ${param} AND \\(${byKeyOrder("payment_id")}key\\) > \\(${sql === "postgres" ? `${param}, ` : ""}${param}\\) ORDER BY ${byKeyOrder("payment_id")}key LIMIT`,
    `FROM rm_feed_entries WHERE key = ${param}$`,
  ];
  for (const w of wanted) expect(sent.some((t) => new RegExp(w).test(t)), w).toBe(true);
}

/** Runs `work` and returns the SELECTs it made, as sent (statement text and values). */
async function recorded<T extends { text: string; values: unknown[] }>(start: (record: (s: T) => void) => () => void, work: () => Promise<void>): Promise<T[]> {
  const seen: T[] = [];
  const stop = start((s) => void (/^\s*SELECT/i.test(s.text) && seen.push(s)));
  try {
    await work();
  } finally {
    stop();
  }
  return seen;
}

const dir = mkdtempSync(join(tmpdir(), "cardflow-plans-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("every list the API makes reads through an index what it returns, plus one", () => {
  it("SQLite: one SEARCH per statement, constrained by every column it compares, never a SCAN or a temporary B-tree", { timeout: 120_000 }, async () => {
    const path = join(dir, "plans.sqlite");
    const { events, readModels } = createSqliteStore({ path });
    await events.close();
    await fill(readModels);
    // better-sqlite3's statements share one prototype: record what each list runs
    const probe = new Database(":memory:");
    const Statement = Object.getPrototypeOf(probe.prepare("SELECT 1")) as Record<"all" | "get", (...args: unknown[]) => unknown> & { source: string };
    probe.close();
    const statements = await recorded<{ text: string; values: unknown[] }>(
      (record) => {
        const original = { all: Statement.all, get: Statement.get };
        for (const m of ["all", "get"] as const)
          Statement[m] = function (this: { source: string }, ...values: unknown[]) {
            record({ text: this.source, values });
            return original[m].apply(this, values);
          };
        return () => Object.assign(Statement, original);
      },
      () => everyList(readModels),
    );
    await readModels.close();
    expectEveryList("sqlite", statements.map((s) => s.text));
    const db = new Database(readModelsPath(path), { readonly: true });
    try {
      for (const { text, values } of statements) {
        const plan = db.prepare(`EXPLAIN QUERY PLAN ${text}`).all(...values).map((r) => (r as { detail: string }).detail);
        expect(plan, text).toHaveLength(1);
        const [detail] = plan as [string];
        expect(detail, text).toMatch(/^SEARCH rm?_?\w+ USING (COVERING )?INDEX \w+ \(.+\)$/);
        // by its unique key: one row at most, whatever else it is compared with
        if (byKey(text)) {
          expect(detail, text).toMatch(/ USING INDEX sqlite_autoindex_\w+ \(key=\?\)$/);
          continue;
        }
        // each column compared in WHERE is in the index's constraint: no row is read to be dropped
        const where = text.split(/ WHERE /i)[1]!.split(/ ORDER BY /i)[0]!;
        const compared = [...where.matchAll(/\(?([a-z_, ]+?)\)?\s*(=|>=|<=|<|>|IS NULL)/g)].flatMap((m) => m[1]!.split(",").map((c) => c.trim()));
        for (const column of new Set(compared)) expect(detail, text).toMatch(new RegExp(`[( ,]${column}[=<>,)]`));
      }
    } finally {
      db.close();
    }
  });

  it("PostgreSQL: index scans only, as custom and as generic plans, no row filtered out, no scan reading more than the result plus one", { timeout: 180_000 }, async () => {
    const schema = `t_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
    const database = await testDatabase();
    const { events, readModels } = await createPostgresStore({ connectionString: database, schema });
    await events.close();
    await fill(readModels);
    type Sent = { text: string; values: unknown[] };
    const statements = await recorded<Sent>(
      (record) => {
        const original = pg.Pool.prototype.query;
        pg.Pool.prototype.query = function (this: pg.Pool, config: unknown, values?: unknown) {
          if (typeof config === "object" && config !== null && "text" in config) record({ text: (config as Sent).text, values: (config as Sent).values ?? [] });
          else if (typeof config === "string") record({ text: config, values: (values as unknown[]) ?? [] });
          return (original as (...a: unknown[]) => unknown).call(this, config, values);
        } as typeof original;
        return () => void (pg.Pool.prototype.query = original);
      },
      () => everyList(readModels),
    );
    await readModels.close();
    expectEveryList("postgres", statements.map((s) => s.text));

    const c = new pg.Client({ connectionString: database, options: `-c search_path=${schema}` });
    await c.connect();
    try {
      await c.query("ANALYZE");
      const literal = (v: unknown) => (v === null ? "NULL" : typeof v === "number" ? String(v) : c.escapeLiteral(String(v)));
      for (const [i, { text, values }] of statements.entries()) {
        await c.query("SET plan_cache_mode = auto");
        const custom = await c.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, values);
        // the generic plan: what a named statement runs once PostgreSQL stops planning per call
        await c.query(`PREPARE plan_${i} AS ${text}`);
        await c.query("SET plan_cache_mode = force_generic_plan");
        const generic = await c.query(`EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE plan_${i}(${values.map(literal).join(", ")})`);
        for (const [kind, result] of [["custom", custom], ["generic", generic]] as const) {
          const root = (result.rows[0] as { "QUERY PLAN": [{ Plan: PlanNode }] })["QUERY PLAN"][0].Plan;
          const returned = root["Actual Rows"] * root["Actual Loops"];
          for (const node of nodes(root)) {
            const where = `${kind} plan of ${text}: ${node["Node Type"]}`;
            if (byKey(text)) {
              // by its unique key: at most one row is read (and then sorted or dropped), by the key's index or (account, key)
              if (/Scan/.test(node["Node Type"])) expect([node["Node Type"], node["Index Name"], node["Actual Rows"] <= 1], where).toEqual(["Index Scan", expect.stringMatching(/_pkey$|^rm_\w+_\d+$/), true]);
              continue;
            }
            expect(["Seq Scan", "Materialize", "Hash", ...(whole(text, values, returned) ? [] : ["Sort", "Incremental Sort", "Bitmap Heap Scan", "Bitmap Index Scan"])], `${where} ${JSON.stringify(root)}`).not.toContain(node["Node Type"]);
            expect(node["Rows Removed by Filter"] ?? 0, `${where} ${JSON.stringify(values)} ${JSON.stringify(root)}`).toBe(0);
            if (/Scan/.test(node["Node Type"])) expect(node["Actual Rows"] * node["Actual Loops"], where).toBeLessThanOrEqual(returned + 1);
          }
        }
      }
    } finally {
      await c.end();
    }
  });
});

/**
 * A list without a limit (a key range: an account's terminals, a customer's cards), or one that
 * returned fewer rows than its limit (a payment's few feed entries), returns every row it matches:
 * PostgreSQL may then gather them by a bitmap and sort them, reading no row more.
 */
const whole = (text: string, values: unknown[], returned: number) => {
  const limit = /LIMIT \$(\d+)/.exec(text);
  const value = limit === null ? undefined : values[Number(limit[1]) - 1];
  return limit !== null && (value === null || returned < Number(value));
};
/** A statement that finds a row by its unique key. */
const byKey = (text: string) => /\bkey = (\?|\$\d+)/.test(text);

interface PlanNode {
  "Node Type": string;
  "Index Name"?: string;
  "Index Cond"?: string;
  "Actual Rows": number;
  "Actual Loops": number;
  "Rows Removed by Filter"?: number;
  Plans?: PlanNode[];
}
const nodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodes)];
