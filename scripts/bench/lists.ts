// Row 14 — lists at scale (issue 24): 1,000,000 payments over 10,000 accounts, one account holding
// 200,000 of them, on SQLite (row 14a) and PostgreSQL (row 14b, embedded). 16 concurrent readers
// list through the server as shipped (GET /v2/payments): the big account's first page and a deep
// page by cursor (150,000 payments in), with and without a status filter, and a typical account's
// first page with and without; p99 per list. The payments are seeded through the store API in
// bulk (events appended by the thousand, the payments read model's rows committed beside them,
// every read model's checkpoint at the head), not over HTTP, by a process of its own.
//   npx tsx scripts/bench/lists.ts [--quick] [--store=sqlite|postgres] [--payments=1000000] [--seconds=30]
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import type { PaymentEventOf } from "../../machines/events.js";
import { paymentsProjection, type PaymentDoc } from "../../projections/payments.js";
import { PROJECTIONS } from "../../projections/registry.js";
import { createProjectionRunner } from "../../projections/runner.js";
import { configFromEnv, openStores } from "../../src/config.js";
import { newEvents } from "../../src/events/new-events.js";
import { uuidV7 } from "../../src/ids.js";
import type { EventData, EventStore, ReadModelStore, RecordedEvent } from "../../src/store/port.js";
import { startPostgres } from "../../test/support/postgres.js";
import { closeClient, connection } from "./client.js";
import { emit, percentile, quick, withV8Flags, type Row } from "./lib.js";
import { accountKeys, serve, type StoreEnv } from "./served.js";

const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const PAYMENTS = Number(arg("payments") ?? (quick ? 2_000 : 1_000_000));
const ACCOUNTS = Math.max(2, Math.round(PAYMENTS / 100)); // 10,000 for a million
const BIG = Math.round(PAYMENTS / 5); // 200,000 for a million
const DEEP = Math.round((BIG * 3) / 4); // a deep page: 150,000 payments in
const READERS = 16;
const SECONDS = Number(arg("seconds") ?? (quick ? 2 : 30));
const LIMIT = 20;
const STORES = (arg("store") ? [arg("store")] : ["sqlite", "postgres"]) as ("sqlite" | "postgres")[];
const BIG_ACCOUNT = "acct_big";
const TYPICAL = "acct_1";

/** How a page with a payment starts: its data first (the answer schema's order), not empty. */
const PAGE_START = '{"data":[{';
/** A problem answer's code (its JSON's `code`), for the errors' tally. */
const problemCode = (text: string) => {
  try {
    return String((JSON.parse(text) as { code?: unknown }).code ?? "");
  } catch {
    return "";
  }
};

type Intent = PaymentEventOf<"PaymentIntentCreated">["data"];
const CARD = { type: "card_not_present" as const, brand: "visa", last_4: "4242", exp_month: "12", exp_year: 2031, cardholder_name: null, funding: "credit" as const };
const STATUSES = ["requires_payment_method", "succeeded", "canceled"] as const;

/** Payment n: its account (the big one first), creation time (one per 10 ms, so the order is n's) and what happened to it. */
function paymentOf(n: number) {
  const account = n < BIG ? BIG_ACCOUNT : `acct_${(n - BIG) % (ACCOUNTS - 1)}`;
  const date_created = new Date(Date.UTC(2026, 0, 1) + n * 10).toISOString().replace("Z", "+00:00");
  const intent: Intent = {
    payment_id: `pi_${n.toString(36).padStart(6, "0")}`,
    external_account_id: account,
    amount: "12.00",
    currency: "USD",
    payment_method_types: "card",
    capture_method: "automatic",
    processor: "A",
    external_transaction_id: `order-${n}`,
    external_customer_id: `cus_${n % 1000}`,
    payment_method_id: "pm_card_visa",
    stored_card: CARD,
    allow_saving_card: false,
    client_secret: null,
    date_created,
  };
  // a third each, in every account: n % 3 alone gave every payment of an account with the same
  // residue of n one status (the typical account's `status=canceled` page was always empty)
  const status = STATUSES[(n + Math.floor(n / ACCOUNTS)) % 3]!;
  const events = [{ type: "PaymentIntentCreated", version: 1, data: intent }];
  if (status === "succeeded") {
    const authorization = { amount_authorized: "12.00", tip_amount: "0.00", donation_amount: "0.00", authorization_code: "A1B2C3", card: CARD, avs_response_code: 0, avs_response_message: "match" };
    events.push({ type: "PaymentCaptured", version: 1, data: { amount: "12.00", authorization } as never });
  } else if (status === "canceled") events.push({ type: "PaymentCanceled", version: 1, data: { cancellation_reason: "abandoned" } as never });
  return { intent, events, stream: `payment-${intent.payment_id}` };
}

/** Appends every payment's events (a few thousand appends in flight: the store's group commits) and commits the payments read model's rows beside them. */
async function seed(events: EventStore, readModels: ReadModelStore): Promise<number> {
  const newId = uuidV7();
  // the read models at their versions, as the server's runner would prepare them
  await createProjectionRunner({ store: events, readModels, projections: PROJECTIONS }).ready();
  const bulk = readModels.bulk?.bind(readModels) ?? (<T>(work: () => Promise<T>) => work());
  let head = 0;
  await bulk(async () => {
    const WAVE = 4_000;
    for (let from = 0; from < PAYMENTS; from += WAVE) {
      const docs = await Promise.all(
        Array.from({ length: Math.min(WAVE, PAYMENTS - from) }, async (_, i) => {
          const n = from + i;
          const { intent, events: domain, stream } = paymentOf(n);
          const data: EventData[] = newEvents(stream, null, domain, { timestamp: intent.date_created, request_id: n + 1, actor: "bench" }, newId);
          const { position } = await events.append(stream, data, { expectedRevision: "no_stream" });
          head = Math.max(head, position);
          // the payments read model's document: the projection's own fold of the stored events
          let doc: PaymentDoc | undefined;
          data.forEach((e, revision) => {
            const recorded: RecordedEvent = { ...e, stream, revision, position: position - data.length + 1 + revision };
            doc = paymentsProjection.apply(doc, recorded);
          });
          return { key: intent.payment_id, doc };
        }),
      );
      await readModels.commitBatch([{ projection: paymentsProjection.name, docs, checkpoint: 0 }]);
      if (!quick && from % 100_000 === 0) console.error(`seeded ${from.toLocaleString("en-US")} payments`);
    }
  });
  // every read model at the head: nothing left for the server's projections to catch up
  await readModels.commitBatch(PROJECTIONS.map((p) => ({ projection: p.name, docs: [], checkpoint: head })));
  return head;
}

async function deepCursor(url: string, key: string, newer: string): Promise<string> {
  const res = await fetch(`${url}/v2/payments?external_account_id=${BIG_ACCOUNT}&limit=1&starting_after=${newer}`, { headers: { authorization: `Bearer ${key}` } });
  const page = (await res.json()) as { next_cursor?: string | null };
  if (!res.ok || !page.next_cursor) throw new Error(`the deep page's cursor: ${res.status} ${JSON.stringify(page)}`);
  return page.next_cursor;
}

async function measure(kind: "sqlite" | "postgres"): Promise<Row> {
  const work = mkdtempSync(join(tmpdir(), "cardflow-lists-"));
  const postgres = kind === "postgres" && !process.env.DATABASE_URL ? await startPostgres() : undefined;
  const databaseUrl = process.env.DATABASE_URL ?? postgres?.url;
  const schema = `lists_${Date.now()}`;
  const store: StoreEnv = kind === "sqlite" ? { DATA_DIR: work } : { DATABASE_URL: databaseUrl!, DATABASE_SCHEMA: schema };
  let version = "";
  try {
    const seedStarted = performance.now();
    await seedApart(store);
    const seedS = (performance.now() - seedStarted) / 1000;
    if (kind === "postgres") {
      const c = new pg.Client({ connectionString: databaseUrl, options: `-c search_path=${schema}` });
      await c.connect();
      version = (await c.query<{ server_version: string }>("SHOW server_version")).rows[0]!.server_version;
      await c.query("VACUUM ANALYZE"); // what autovacuum would have done after a bulk load
      await c.end();
    }
    const keys = await accountKeys(store, [BIG_ACCOUNT, TYPICAL]);
    const server = await serve(store, kind === "postgres" ? { DATA_DIR: work } : {});
    try {
      // start-up work done (the event feed indexes the seeded events) before anything is measured
      await server.idle();
      // the cursor a client paging down holds at depth DEEP (cursors are sealed: asked of the server, the page of one payment after the one newer than it)
      const deep = await deepCursor(server.url, keys.get(BIG_ACCOUNT)!, paymentOf(BIG - DEEP).intent.payment_id);
      const LISTS = {
        "big, first page": [BIG_ACCOUNT, ""],
        "big, first page, status": [BIG_ACCOUNT, "&status=succeeded"],
        "big, deep page by cursor": [BIG_ACCOUNT, `&cursor=${deep}`],
        "big, deep page by cursor, status": [BIG_ACCOUNT, `&status=succeeded&cursor=${deep}`],
        "typical, first page": [TYPICAL, ""],
        "typical, first page, status": [TYPICAL, "&status=canceled"],
      } as const;
      type List = keyof typeof LISTS;
      const names = Object.keys(LISTS) as List[];
      const latencies = Object.fromEntries(names.map((n) => [n, [] as number[]])) as Record<List, number[]>;
      let errors = 0;
      /** What the errors were: HTTP status and problem code, or "empty" for a 200 with no payment. */
      const errorKinds = new Map<string, number>();
      // a connection per reader, reading into a buffer of its own (./client.ts connection: no garbage per page)
      const connections = await Promise.all(Array.from({ length: READERS }, () => connection(server.url)));
      const list = async (reader: number, name: List, record: boolean) => {
        const [account, query] = LISTS[name];
        const started = performance.now();
        // a connection reset or closed under the reader: an error (status 0), counted like any other
        const { status, text } = await connections[reader]!.get(`/v2/payments?external_account_id=${account}&limit=${LIMIT}${query}`, keys.get(account), PAGE_START.length).catch((e: Error & { code?: string }) => ({ status: 0, text: e.code ?? e.message }));
        const ms = performance.now() - started;
        const ok = status === 200;
        if (!ok || text !== PAGE_START) {
          errors++;
          const kind = ok ? "empty" : status === 0 ? text : `${status} ${problemCode(text)}`.trim();
          errorKinds.set(kind, (errorKinds.get(kind) ?? 0) + 1);
        }
        if (record) latencies[name].push(ms);
      };
      const readers = async (seconds: number, record: boolean) => {
        const until = performance.now() + seconds * 1000;
        await Promise.all(Array.from({ length: READERS }, async (_, r) => {
          for (let i = r; performance.now() < until; i++) await list(r, names[i % names.length]!, record);
        }));
      };
      await readers(quick ? 0.2 : 5, false); // warm-up
      await server.resetLoopDelay();
      const cpuBefore = server.cpuSeconds();
      await readers(SECONDS, true);
      const cpu = server.cpuSeconds() - cpuBefore;
      for (const c of connections) c.close();
      const loop = await server.loopDelay();
      const lists = names.reduce((n, name) => n + latencies[name].length, 0);
      const p99 = (n: List) => percentile(latencies[n], 99);
      const worst = names.reduce((a, b) => (p99(a) >= p99(b) ? a : b));
      const storeName = kind === "sqlite" ? "SQLite" : `PostgreSQL ${version} (embedded)`;
      return {
        row: kind === "sqlite" ? "14a" : "14b",
        figure: `lists at scale, ${storeName}: GET /v2/payments with ${PAYMENTS.toLocaleString("en-US")} payments over ${ACCOUNTS.toLocaleString("en-US")} accounts, one holding ${BIG.toLocaleString("en-US")}; ${READERS} concurrent readers`,
        value: `worst p99 ${p99(worst).toFixed(1)} ms (${worst}); ${errors} errors${errors ? ` (${[...errorKinds].map(([k, n]) => `${k}: ${n}`).join(", ")})` : ""}`,
        ceiling: "—",
        ratio: "—",
        target: "p99 ≤ 10 ms for every list (first page, deep page by cursor, with and without a status filter; the big account and a typical one)",
        met: errors === 0 && names.every((n) => p99(n) <= 10),
        command: `npx tsx scripts/bench/lists.ts --store=${kind}`,
        notes: [
          `per list (${LIMIT} payments a page): ${names.map((n) => `${n}: p50 ${percentile(latencies[n], 50).toFixed(1)} / p99 ${p99(n).toFixed(1)} ms (${latencies[n].length} lists)`).join("; ")}`,
          `the deep page starts ${DEEP.toLocaleString("en-US")} payments into the big account (a cursor); statuses a third each (requires_payment_method, succeeded, canceled); seeded through the store API in ${seedS.toFixed(0)} s by a process of its own (events and the payments table, not HTTP), then the server as shipped (src/main.ts under tsx, sandbox, metrics on) left to finish its start-up work before ${SECONDS} s of reads`,
          `event-loop delay inside the server while reading: p99 ${loop.p99} ms, max ${loop.max} ms`,
          `the server's CPU while reading (every thread, /proc): ${Math.round((100 * cpu) / SECONDS)} % of one core, ${Math.round((1e6 * cpu) / lists)} µs per list`,
        ],
      };
    } finally {
      await server.stop();
    }
  } finally {
    await postgres?.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * Seeds `store` in a process of its own (this script with --seed=), which exits when done: the
 * process that times the reads holds the readers' heap only, not a million payments' garbage.
 */
async function seedApart(store: StoreEnv): Promise<void> {
  const args = ["--import", "tsx", fileURLToPath(import.meta.url), `--seed=${JSON.stringify(store)}`, `--payments=${PAYMENTS}`, ...(quick ? ["--quick"] : [])];
  const child = spawn(process.execPath, args, { stdio: ["ignore", "inherit", "inherit"] });
  const [code] = (await once(child, "exit")) as [number | null];
  if (code !== 0) throw new Error(`seeding exited with ${code}`);
}

const seedInto = arg("seed");
if (seedInto) {
  // the store the server will open, as it opens it (the environment's DATA_DIR or DATABASE_URL)
  const opened = await openStores(configFromEnv({ DATA_DIR: "", DATABASE_URL: "", ...(JSON.parse(seedInto) as StoreEnv) }));
  await seed(opened.store, opened.readModels);
  await Promise.all([opened.store.close(), opened.readModels.close()]);
} else {
  // V8's memory reducer shrank this process's heap while it waited for the server's start-up work
  // (some 40 s at 1,000,000 payments): it then collected the old generation 10–20 times a second
  // through the whole run, pausing the readers, whose late reads counted as the server's.
  withV8Flags(["--no-memory-reducer"]);
  const rows: Row[] = [];
  for (const kind of STORES) rows.push(await measure(kind));
  closeClient();
  emit(rows);
}
