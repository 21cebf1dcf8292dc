// Row 13 — the served API under a realistic mixed load (issue 24): 64 clients for 60 s against the
// server as shipped (src/main.ts, what `npm start` runs), on SQLite (row 13a) and on PostgreSQL
// (row 13b, the embedded server, its version in the row's notes). Each client runs its own
// stored-card and terminal flows and reads, an operation at a time, chosen at random with the
// weights below (ROUND3-NOTES: ~40 % writes, ~60 % reads of which status reads 35 %, lists of
// payments, terminals and cards 25 %). Reported: requests/s, p50/p99 per operation, errors (any
// answer but 2xx), and the event-loop delay measured inside the server (perf_hooks).
//   npx tsx scripts/bench/mixed.ts [--quick] [--store=sqlite|postgres] [--clients=64] [--seconds=60]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { startPostgres } from "../../test/support/postgres.js";
import { type Answer, call, closeClient, connection } from "./client.js";
import { emit, fmtRate, percentile, quick, type Row } from "./lib.js";
import { accountKeys, serve, type Served, type StoreEnv } from "./served.js";

const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const CLIENTS = Number(arg("clients") ?? (quick ? 8 : 64));
const SECONDS = Number(arg("seconds") ?? (quick ? 2 : 60));
const WARM_UP_S = quick ? 0 : 10;
const STORES = (arg("store") ? [arg("store")] : ["sqlite", "postgres"]) as ("sqlite" | "postgres")[];
const ACCOUNTS = 8;

/** The mix, in percent of operations: writes 40, reads 60 (status 35, lists 25). */
const MIX = {
  create: 12,
  authorize: 8,
  present: 5,
  capture: 7,
  cancel: 3,
  refund: 5,
  status: 35,
  list_payments: 12,
  list_terminals: 6,
  list_cards: 7,
} as const;
type Op = keyof typeof MIX;
const OPS = Object.keys(MIX) as Op[];
if (OPS.reduce((s, op) => s + MIX[op], 0) !== 100) throw new Error("the mix must add up to 100 %");

/** What a client keeps between its operations: its payments in each step of their flows. */
interface Client {
  /** Its measured requests' connection (./client.ts connection: no garbage per chunk read). */
  http: Awaited<ReturnType<typeof connection>>;
  account: string;
  key: string;
  customer: string;
  terminal: string;
  savedCard: string;
  toAuthorize: string[];
  onTerminal: string[];
  toPresent: string[];
  toCapture: string[];
  toRefund: string[];
  recent: string[];
  references: number;
}

interface Tally {
  latencies: Record<Op, number[]>;
  errors: Record<Op, number>;
  samples: string[];
}

const pick = <T>(xs: T[]) => xs.splice(Math.floor(Math.random() * xs.length), 1)[0];
const any = <T>(xs: readonly T[]) => xs[Math.floor(Math.random() * xs.length)]!;

function chooseOp(): Op {
  let r = Math.random() * 100;
  for (const op of OPS) if ((r -= MIX[op]) < 0) return op;
  return "status";
}

/** Runs one operation of the client (the step its payments allow; a create when none can take it). */
async function step(c: Client, wanted: Op, t: Tally | null) {
  // the operation falls back to an earlier step of a flow when the client has no payment for it
  let op: Op = wanted;
  if (op === "refund" && c.toRefund.length === 0) op = "capture";
  if ((op === "capture" || op === "cancel") && c.toCapture.length === 0 && (op === "capture" || c.toAuthorize.length === 0)) op = "present";
  if (op === "present" && c.toPresent.length === 0) op = "authorize";
  if (op === "authorize" && c.toAuthorize.length === 0 && (c.onTerminal.length === 0 || c.toPresent.length > 0)) op = "create";
  if (op === "status" && c.recent.length === 0) op = "create";

  const started = performance.now();
  // a connection reset or closed under the client: an error of its operation (status 0), counted
  // and shown in the row like any other; the client's next request opens a new connection
  const { answer, next } = await send(c, op).catch((e: Error & { code?: string }) => ({ answer: { status: 0, body: `${e.message} (${e.code ?? "no code"})` }, next: undefined }));
  const ms = performance.now() - started;
  const ok = answer.status >= 200 && answer.status < 300;
  if (ok) next?.();
  if (!t) return;
  t.latencies[op].push(ms);
  if (!ok) {
    t.errors[op]++;
    if (t.samples.length < 5) t.samples.push(`${op} ${answer.status} ${JSON.stringify(answer.body).slice(0, 200)}`);
  }
}

/** Sends the request of `op` for the client; `next`: what moves the client's payments a step once it succeeded. */
async function send(c: Client, op: Op): Promise<{ answer: Answer; next?: () => void }> {
  const acct = { external_account_id: c.account };
  const remember = (id: string) => {
    c.recent.push(id);
    if (c.recent.length > 20) c.recent.shift();
  };
  let answer: Answer;
  let next: (() => void) | undefined;
  switch (op) {
    case "create": {
      const terminalFlow = Math.random() < 1 / 3;
      const reference = `ord-${c.customer}-${c.references++}`;
      const body = terminalFlow
        ? { ...acct, amount: "25.00", payment_method_types: "card_present", capture_method: "manual", external_payment_id: reference }
        : { ...acct, amount: "10.00", payment_method_types: "card", capture_method: "manual", payment_method_id: Math.random() < 0.5 ? "pm_card_visa" : c.savedCard, external_customer_id: c.customer, external_payment_id: reference };
      answer = await c.http.call(c.key, "POST", "/v2/payment/intent", body);
      next = () => ((terminalFlow ? c.onTerminal : c.toAuthorize).push(answer.body.payment_id), remember(answer.body.payment_id));
      break;
    }
    case "authorize": {
      // a terminal collects one payment at a time: its next one once the card of the last was presented
      const onTerminal = c.toPresent.length === 0 && c.onTerminal.length > 0 && (c.toAuthorize.length === 0 || Math.random() < 0.5);
      const id = onTerminal ? pick(c.onTerminal)! : pick(c.toAuthorize)!;
      answer = await c.http.call(c.key, "POST", "/v2/payment/auth", { ...acct, payment_id: id, ...(onTerminal && { terminal_id: c.terminal }) });
      next = () => (onTerminal ? c.toPresent : c.toCapture).push(id);
      break;
    }
    case "present": {
      const id = pick(c.toPresent)!;
      answer = await c.http.call(c.key, "POST", "/sim/terminal/present-card", { ...acct, terminal_id: c.terminal, card_number: "4242424242424242" });
      next = () => c.toCapture.push(id);
      break;
    }
    case "capture": {
      const id = pick(c.toCapture)!;
      answer = await c.http.call(c.key, "POST", "/v2/payment/capture", { ...acct, payment_id: id, amount: "10.00" });
      next = () => c.toRefund.push(id);
      break;
    }
    case "cancel": {
      const id = (c.toAuthorize.length > 0 ? pick(c.toAuthorize) : pick(c.toCapture))!;
      answer = await c.http.call(c.key, "POST", "/v2/payment/cancel", { ...acct, payment_id: id });
      break;
    }
    case "refund":
      answer = await c.http.call(c.key, "POST", "/v2/payment/refund", { ...acct, payment_id: pick(c.toRefund)! });
      break;
    case "status":
      answer = await c.http.call(c.key, "GET", `/v2/payment/intent/${any(c.recent)}?external_account_id=${c.account}`);
      break;
    case "list_payments": {
      // ROUND3-NOTES' combinations: the account alone, + status, + customer, + terminal, a reference lookup
      const filter = any(["", "", "&status=requires_capture", `&external_customer_id=${c.customer}`, `&terminal_id=${c.terminal}`, `&q=ord-${c.customer}-${Math.floor(Math.random() * Math.max(1, c.references))}`]);
      answer = await c.http.call(c.key, "GET", `/v2/payments?external_account_id=${c.account}&limit=20${filter}`);
      break;
    }
    case "list_terminals":
      answer = await c.http.call(c.key, "GET", `/v2/hardware?external_account_id=${c.account}`);
      break;
    case "list_cards":
      answer = await c.http.call(c.key, "GET", `/v1/customer/card?external_account_id=${c.account}&external_customer_id=${c.customer}`);
      break;
  }
  return { answer, next };
}

/** Each client's account, key, customer, terminal and a card saved for its customer (set up over HTTP, not measured). */
async function setUp(base: string, keys: Map<string, string>): Promise<Client[]> {
  return Promise.all(
    Array.from({ length: CLIENTS }, async (_, i) => {
      const account = `acct_mix_${i % ACCOUNTS}`;
      const key = keys.get(account)!;
      const acct = { external_account_id: account };
      const ok = async (a: Promise<Answer>) => {
        const r = await a;
        if (r.status !== 200) throw new Error(`set-up: ${r.status} ${JSON.stringify(r.body)}`);
        return r.body;
      };
      const customer = `cus_mix_${i}`;
      const terminal = (await ok(call(base, key, "POST", "/v2/hardware", { ...acct, terminal_type: "A_async" }))).terminal_id as string;
      // a card on file is saved from a synchronous terminal's payment (the asynchronous type keeps none):
      // its auth blocks until the card is presented
      const syncTerminal = (await ok(call(base, key, "POST", "/v2/hardware", { ...acct, terminal_type: "A_sync" }))).terminal_id as string;
      const intent = await ok(call(base, key, "POST", "/v2/payment/intent", { ...acct, amount: "1.00", payment_method_types: "card_present", capture_method: "manual", allow_saving_card: true, external_customer_id: customer }));
      const authorized = ok(call(base, key, "POST", "/v2/payment/auth", { ...acct, payment_id: intent.payment_id, terminal_id: syncTerminal }));
      for (let tries = 0; (await call(base, key, "POST", "/sim/terminal/present-card", { ...acct, terminal_id: syncTerminal, card_number: "5555555555554444" })).status !== 200; tries++) {
        if (tries > 200) throw new Error("set-up: the synchronous terminal never started collecting");
        await new Promise((r) => setTimeout(r, 50));
      }
      await authorized;
      await ok(call(base, key, "POST", "/v2/payment/capture", { ...acct, payment_id: intent.payment_id, amount: "1.00" }));
      const saved = await ok(call(base, key, "POST", "/v1/customer/card", { ...acct, payment_id: intent.payment_id, external_customer_id: customer }));
      return { http: await connection(base), account, key, customer, terminal, savedCard: saved.payment_method_id, toAuthorize: [], onTerminal: [], toPresent: [], toCapture: [], toRefund: [], recent: [intent.payment_id], references: 0 };
    }),
  );
}

/** Every client looping over its operations until `until`; a tally when measuring. */
async function drive(clients: Client[], until: number, t: Tally | null) {
  await Promise.all(
    clients.map(async (c) => {
      while (performance.now() < until) await step(c, chooseOp(), t);
    }),
  );
}

async function measure(kind: "sqlite" | "postgres"): Promise<Row> {
  const work = mkdtempSync(join(tmpdir(), "cardflow-mixed-"));
  const postgres = kind === "postgres" && !process.env.DATABASE_URL ? await startPostgres() : undefined;
  const databaseUrl = process.env.DATABASE_URL ?? postgres?.url;
  const store: StoreEnv = kind === "sqlite" ? { DATA_DIR: work } : { DATABASE_URL: databaseUrl!, DATABASE_SCHEMA: `mixed_${Date.now()}` };
  let version = "";
  if (kind === "postgres") {
    const c = new pg.Client({ connectionString: databaseUrl });
    await c.connect();
    version = (await c.query<{ server_version: string }>("SHOW server_version")).rows[0]!.server_version;
    await c.end();
  }
  const keys = await accountKeys(store, Array.from({ length: ACCOUNTS }, (_, i) => `acct_mix_${i}`));
  // the host's side of the sandbox processor and the webhook key live in DATA_DIR, for PostgreSQL too
  const server: Served = await serve(store, kind === "postgres" ? { DATA_DIR: work } : {});
  try {
    const clients = await setUp(server.url, keys);
    if (WARM_UP_S) await drive(clients, performance.now() + WARM_UP_S * 1000, null);
    const t: Tally = { latencies: Object.fromEntries(OPS.map((op) => [op, []])) as unknown as Tally["latencies"], errors: Object.fromEntries(OPS.map((op) => [op, 0])) as Record<Op, number>, samples: [] };
    await server.resetLoopDelay();
    const cpuBefore = server.cpuSeconds();
    const started = performance.now();
    await drive(clients, started + SECONDS * 1000, t);
    const elapsed = (performance.now() - started) / 1000;
    const cpu = server.cpuSeconds() - cpuBefore;
    const loop = await server.loopDelay();
    for (const c of clients) c.http.close();
    const total = OPS.reduce((n, op) => n + t.latencies[op].length, 0);
    const errors = OPS.reduce((n, op) => n + t.errors[op], 0);
    const rate = total / elapsed;
    const p99 = (op: Op) => percentile(t.latencies[op], 99);
    const worst = OPS.filter((op) => t.latencies[op].length > 0).reduce((a, b) => (p99(a) >= p99(b) ? a : b));
    const [minRate, maxP99] = kind === "sqlite" ? [2_500, 50] : [1_500, 100];
    const perOp = OPS.map((op) => {
      const xs = t.latencies[op];
      return `${op} ${((100 * xs.length) / total).toFixed(1)} % (weight ${MIX[op]} %): p50 ${percentile(xs, 50).toFixed(1)} / p99 ${p99(op).toFixed(1)} ms${t.errors[op] ? `, ${t.errors[op]} errors` : ""}`;
    });
    const storeName = kind === "sqlite" ? "SQLite" : `PostgreSQL ${version} (embedded)`;
    return {
      row: kind === "sqlite" ? "13a" : "13b",
      figure: `mixed load over HTTP, ${CLIENTS} clients for ${SECONDS} s, ${storeName}: requests/s (writes 40 %, status reads 35 %, lists 25 %)`,
      value: `${fmtRate(rate, "req/s")}; worst p99 ${p99(worst).toFixed(1)} ms (${worst}); ${errors} errors; event-loop delay p99 ${loop.p99} ms (max ${loop.max} ms)`,
      ceiling: "—",
      ratio: "—",
      target: `≥ ${minRate.toLocaleString("en-US")} req/s, every operation's p99 ≤ ${maxP99} ms, 0 errors, event-loop delay p99 ≤ 20 ms`,
      met: rate >= minRate && OPS.every((op) => t.latencies[op].length === 0 || p99(op) <= maxP99) && errors === 0 && loop.p99 <= 20,
      command: `npx tsx scripts/bench/mixed.ts --store=${kind}`,
      notes: [
        `per operation (its share of the requests measured): ${perOp.join("; ")}`,
        `the server as shipped: src/main.ts under tsx (what npm start runs), sandbox, LOG_LEVEL info, metrics on; ${CLIENTS} clients, each on a kept-alive connection of its own reading into one buffer (scripts/bench/client.ts connection), ${ACCOUNTS} accounts, each client with its own terminal, customer and a card saved for it (stored-card creates use it or pm_card_visa, half each); lists: the account alone, + status, + customer, + terminal, a reference lookup; ${WARM_UP_S} s warm-up not measured`,
        `event-loop delay inside the server over the measured ${SECONDS} s (perf_hooks.monitorEventLoopDelay, resolution 10 ms, ${loop.samples} samples; the lateness of its timer, the timer's own 10 ms interval taken off): p50 ${loop.p50} ms, p99 ${loop.p99} ms, max ${loop.max} ms, mean ${loop.mean} ms`,
        `the server's CPU over the measured ${SECONDS} s (every thread, /proc): ${Math.round((100 * cpu) / elapsed)} % of one core, ${Math.round((1e6 * cpu) / total)} µs per request`,
        ...(errors ? [`first errors: ${t.samples.join(" | ")}`] : []),
      ],
    };
  } finally {
    await server.stop();
    await postgres?.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

const rows: Row[] = [];
for (const kind of STORES) rows.push(await measure(kind));
closeClient();
emit(rows);
