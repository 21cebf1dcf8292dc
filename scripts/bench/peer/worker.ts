// One contender of the peer benchmark (scripts/bench/peer-emmett.ts) in its own process: cardflow's
// engine or the Emmett payment (./emmett-payment.ts), each with its own heap, and Emmett's driver
// settings (dumbo sets pg's type parsers process-wide: int8 as BigInt) apart from cardflow's.
// The parent sends one job at a time over IPC:
//   { job: "run", concurrency, ms }: on a fresh database of the same server, a warm-up of ms / 4,
//     then stored-card flows for ms by `concurrency` clients; says { timing: true } when the timed
//     part starts and answers { rate, cpuUsPerFlow, flows, ms };
//   { job: "count", flows }: runs that many flows one after the other (after a warm-up of 5) and
//     answers what they sent to PostgreSQL per flow: statements (each a round trip: pg sends one
//     query at a time per connection) by kind, transactions that wrote (commits), and the WAL
//     records and syncs to disk the server made for them (pg_stat_wal);
//   { job: "exit" }.
//   node --import tsx scripts/bench/peer/worker.ts <cardflow|emmett> <postgres url>   (forked by the parent)
import { getPostgreSQLEventStore } from "@event-driven-io/emmett-postgresql";
import { randomUUID } from "node:crypto";
import pg from "pg";
import { systemClock } from "../../../src/clock.js";
import { createEngine } from "../../../src/engine.js";
import { randomIds } from "../../../src/ids.js";
import { createSimulators } from "../../../src/processors/simulator.js";
import { createPostgresStore } from "../../../src/store/postgres/index.js";
import { openBenchAccount, storedCardFlow } from "../flows.js";
import { emmettPayments } from "./emmett-payment.js";

export type Contender = "cardflow" | "emmett";
export type Job = { job: "run"; concurrency: number; ms: number } | { job: "count"; flows: number } | { job: "exit" };
export interface RunResult {
  rate: number;
  cpuUsPerFlow: number;
  flows: number;
  ms: number;
}
export interface CountResult {
  flows: number;
  /** Statements sent per flow, by kind. */
  statements: Record<string, number>;
  /** Transactions per flow that wrote (a COMMIT after a write, or a write statement outside BEGIN). */
  commits: number;
  /** WAL records and WAL syncs to disk per flow, the whole server's (pg_stat_wal; nothing else runs meanwhile). */
  walRecords: number;
  walSyncs: number;
}

const contender = process.argv[2] as Contender;
const adminUrl = process.argv[3]!;
if (contender !== "cardflow" && contender !== "emmett") throw new Error("usage: worker.ts <cardflow|emmett> <postgres url>");

/** A fresh database on the server for one job (both contenders get the same: empty tables, their default pools). */
async function freshDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `peer_${contender}_${randomUUID().replaceAll("-", "").slice(0, 10)}`;
  const admin = async (sql: string) => {
    const c = new pg.Client({ connectionString: adminUrl });
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { url: url.href, drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

/** One stored-card flow (create + authorize + capture of 10.00, checked) and how to close what it uses. */
async function setUp(url: string): Promise<{ flow: () => Promise<void>; close: () => Promise<void> }> {
  if (contender === "cardflow") {
    // as row 7: the engine over the PostgreSQL store with its defaults (pool of 10), no live projections
    const { events, readModels } = await createPostgresStore({ connectionString: url });
    const engine = createEngine({ store: events, readModels });
    const card = await openBenchAccount(engine);
    return { flow: () => storedCardFlow(engine, card), close: () => engine.close() };
  }
  // Emmett's own setup (its samples): the event store on the connection string, the schema migrated
  // once at start instead of checked on each call. Its pool is pg's default (pg.Pool, 10 connections)
  // handed in rather than made by dumbo: dumbo's shared pools are counted per getPool call and one
  // close left this one open, whose idle connections then died with the dropped database and
  // crashed the process (an 'error' on a pool nobody listens to).
  const pool = new pg.Pool({ connectionString: url });
  pool.on("error", () => undefined); // an idle connection the server ended: the pool replaces it
  const eventStore = getPostgreSQLEventStore(url, { schema: { autoMigration: "None" }, connectionOptions: { pool } });
  await eventStore.schema.migrate();
  const ids = randomIds();
  const processor = createSimulators({ clock: systemClock, ids }).get("B");
  const payments = emmettPayments({ eventStore, processor, ids, clock: systemClock });
  const charge = { external_account_id: "acct_bench", currency: "USD", amount: "10.00", payment_method_id: "pm_card_visa", external_customer_id: "cus_bench" };
  return {
    async flow() {
      const paymentId = await payments.create(charge);
      const authorized = await payments.authorize(paymentId);
      if (authorized.status !== "requires_capture") throw new Error(`authorize left ${authorized.status}`);
      const captured = await payments.capture(paymentId, "10.00");
      if (captured.status !== "succeeded" || captured.amount_captured !== "10.00") throw new Error(`capture left ${captured.status}, ${captured.status === "none" ? "" : captured.amount_captured} captured`);
    },
    close: async () => {
      await eventStore.close();
      await pool.end();
    },
  };
}

/** Flows completed per second by `concurrency` clients starting flows for `ms`. */
async function flowsFor(flow: () => Promise<void>, ms: number, concurrency: number): Promise<{ flows: number; ms: number }> {
  let flows = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() - start < ms) {
        await flow();
        flows++;
      }
    }),
  );
  return { flows, ms: performance.now() - start };
}

async function run(concurrency: number, ms: number): Promise<RunResult> {
  const db = await freshDatabase();
  try {
    const { flow, close } = await setUp(db.url);
    try {
      await flowsFor(flow, ms / 4, concurrency);
      process.send!({ timing: true });
      const cpu = process.cpuUsage();
      const timed = await flowsFor(flow, ms, concurrency);
      const used = process.cpuUsage(cpu);
      return { rate: (timed.flows * 1000) / timed.ms, cpuUsPerFlow: (used.user + used.system) / timed.flows, ...timed };
    } finally {
      await close();
    }
  } finally {
    await db.drop();
  }
}

/** Kind of a statement, for the count: a function it calls (`SELECT * FROM f(...)`, `SELECT f(...)`), or its verb and table. */
function kindOf(text: string): string {
  const t = text.replace(/\s+/g, " ").trim();
  const verb = t.split(" ")[0]!.toUpperCase();
  const called = /\bFROM (\w+)\(/i.exec(t);
  if (called) return `${called[1]}()`;
  const table = /\b(?:FROM|INTO|UPDATE) (\w+)/i.exec(t);
  if (table) return `${verb} ${table[1]}`;
  const fn = /^SELECT (\w+)\(/i.exec(t);
  return fn ? `${fn[1]}()` : verb;
}
const WRITES = /^(INSERT|UPDATE|DELETE|MERGE)|append_batch|append_one|emt_append_to_stream/i;

/** The server's WAL counters (pg_stat_wal, whole server): records written and syncs to disk (fsync or fdatasync). */
async function walStats(): Promise<{ records: number; syncs: number }> {
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  try {
    const row = (await c.query<{ wal_records: string; wal_sync?: string }>("SELECT * FROM pg_stat_wal")).rows[0]!;
    return { records: Number(row.wal_records), syncs: row.wal_sync === undefined ? NaN : Number(row.wal_sync) };
  } finally {
    await c.end();
  }
}
/** Backends publish their statistics at most once a second once idle, and at exit: wait for that. */
const statsPublished = () => new Promise((r) => setTimeout(r, 1_500));

async function count(flows: number): Promise<CountResult> {
  const db = await freshDatabase();
  try {
    const { flow, close } = await setUp(db.url);
    let closed = false;
    try {
      for (let i = 0; i < 5; i++) await flow();
      await statsPublished();
      const walBefore = await walStats();
      const statements: Record<string, number> = {};
      let commits = 0;
      const open = new WeakMap<object, { wrote: boolean }>();
      const original = pg.Client.prototype.query;
      pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
        const first = args[0] as string | { text?: string } | undefined;
        const text = typeof first === "string" ? first : (first?.text ?? "");
        const kind = kindOf(text);
        statements[kind] = (statements[kind] ?? 0) + 1;
        const tx = open.get(this);
        if (/^BEGIN/i.test(kind)) open.set(this, { wrote: false });
        else if (/^(COMMIT|END)/i.test(kind)) {
          if (tx?.wrote) commits++;
          open.delete(this);
        } else if (/^ROLLBACK/i.test(kind)) open.delete(this);
        else if (WRITES.test(text.trim()) || WRITES.test(kind)) {
          if (tx) tx.wrote = true;
          else commits++;
        }
        return (original as (...a: unknown[]) => unknown).apply(this, args);
      } as typeof original;
      try {
        for (let i = 0; i < flows; i++) await flow();
      } finally {
        pg.Client.prototype.query = original;
      }
      // the connections end, so their backends publish what they wrote
      closed = true;
      await close();
      await statsPublished();
      const walAfter = await walStats();
      return {
        flows,
        statements: Object.fromEntries(Object.entries(statements).map(([k, n]) => [k, n / flows])),
        commits: commits / flows,
        walRecords: (walAfter.records - walBefore.records) / flows,
        walSyncs: (walAfter.syncs - walBefore.syncs) / flows,
      };
    } finally {
      if (!closed) await close();
    }
  } finally {
    await db.drop();
  }
}

process.on("message", (message: Job) => {
  const answer = (work: Promise<unknown>) =>
    work.then(
      (result) => process.send!({ result }),
      (error: unknown) => process.send!({ error: error instanceof Error ? (error.stack ?? error.message) : String(error) }),
    );
  if (message.job === "run") void answer(run(message.concurrency, message.ms));
  else if (message.job === "count") void answer(count(message.flows));
  else process.exit(0);
});
process.send!({ ready: true });
