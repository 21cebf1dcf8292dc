// One chaos run: the cluster started as shipped, K workers for N seconds while faults planned from
// the seed are injected, then the faults lifted, the reconciler (the servers' own, as documented)
// given time to close what was left open, the store and the processor's ledger read, and the
// history checked. The history is written as JSONL beside the verdict.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { foldPayment, PAYMENT_STREAM } from "./checker/model.js";
import { check, type Anomaly, type LedgerEntry } from "./checker/index.js";
import { startCluster, type Cluster, type StoreKind } from "./cluster.js";
import { injectFaults, planFaults } from "./faults.js";
import { toJsonl, type Entry } from "./history.js";
import { random } from "./random.js";
import { summarize, type Summary } from "./summary.js";
import { runWorkload } from "./workload.js";
import type { SeededDefect } from "../../src/seeded-defects.js";
import type { RecordedEvent } from "../../src/store/port.js";

export interface ChaosOptions {
  store: StoreKind;
  seconds: number;
  seed: number;
  workers?: number;
  /** Payments worked on at a time (small: operations collide). */
  pool?: number;
  /** PostgreSQL to run on (a fresh schema); default an embedded one (which can also be stopped). */
  databaseUrl?: string;
  /** A negative control: the servers run with this seeded defect (src/seeded-defects.ts). */
  defect?: SeededDefect;
  historyFile?: string;
  /** How long to wait at the end for the reconciler to close open attempts (default 30 s). */
  settleMs?: number;
  log?: (line: string) => void;
}

export interface ChaosResult {
  summary: Summary;
  anomalies: Anomaly[];
  history: Entry[];
  events: RecordedEvent[];
  ledger: Array<[string, LedgerEntry]>;
  historyFile: string;
  /** Servers that crashed during the run, or did not stop cleanly on SIGTERM at the end (exit code, last output). */
  unclean: Array<{ server: number; code: number | null; output: string; crashed: boolean }>;
  /** Each server's last output (LOG_LEVEL warn: its warnings and errors), to trace a 500 to its cause. */
  output: string[];
}

const ACCOUNT = "acct_chaos";
/** The servers' reconciler: attempts open longer than the grace are resolved, looked for every second. */
const RECONCILER = { RECONCILE_GRACE_MS: "8000", RECONCILE_INTERVAL_MS: "1000" };

export async function runChaos(o: ChaosOptions): Promise<ChaosResult> {
  const log = o.log ?? (() => undefined);
  const rng = random(o.seed);
  const env: Record<string, string> = { ...RECONCILER, SIM_PROCESSOR_LATENCY_MS: "10", ...(o.defect ? { CARDFLOW_SEEDED_DEFECT: o.defect } : {}) };
  log(`starting ${o.store === "sqlite" ? "2 servers on one SQLite directory" : `3 servers on one PostgreSQL${o.databaseUrl ? "" : " (embedded)"}`}${o.defect ? `, seeded defect ${o.defect}` : ""}`);
  const cluster = await startCluster({ store: o.store, databaseUrl: o.databaseUrl, env });
  let stopped: Awaited<ReturnType<Cluster["stop"]>> | null = null;
  try {
    const apiKey = cluster.openAccount(ACCOUNT, "B");
    const terminals = await registerTerminals(cluster, apiKey, 3);
    const history: Entry[] = [];
    const t0 = performance.now();
    const now = () => performance.now() - t0;
    const timeUp = () => now() >= o.seconds * 1_000;
    history.push({ type: "clock", t: now(), wall: Date.now() });
    const transport = {
      apiKey,
      now,
      record: (e: Entry) => void history.push(e),
      async server(r: typeof rng) {
        const all = Array.from({ length: cluster.servers }, (_, i) => i);
        const live = all.filter((i) => cluster.urlOf(i) !== null);
        // none running (a restart under way, or a crash): one of them all the same, as a balancer would
        const index = r.pick(live.length ? live : all);
        return { index, url: cluster.lastUrlOf(index) };
      },
    };
    const plan = planFaults(rng.fork("faults"), o.seconds, cluster);
    log(`running ${o.workers ?? 8} workers for ${o.seconds} s, seed ${o.seed}, ${plan.length} faults planned`);
    const faults = injectFaults(plan, cluster, now, transport.record, timeUp);
    await runWorkload({ transport, account: ACCOUNT, terminals, customers: ["cus_1", "cus_2"], workers: o.workers ?? 8, pool: o.pool ?? 6, rng: rng.fork("workload"), timeUp });
    await faults;
    cluster.processorFault(null);
    for (let i = 0; i < cluster.servers; i++) if (cluster.urlOf(i) === null) await cluster.start(i).catch(() => undefined); // a crash, recorded
    log("workload done; waiting for the reconciler to close open attempts");
    await settled(cluster, o.settleMs ?? 30_000);
    const events = await cluster.events();
    const ledger = cluster.ledger() as Array<[string, LedgerEntry]>;
    stopped = await cluster.stop();
    const { anomalies } = check({ history, events, ledger });
    const historyFile = o.historyFile ?? `.tmp/chaos/${o.store}-${o.seed}${o.defect ? `-${o.defect}` : ""}.jsonl`;
    mkdirSync(dirname(historyFile), { recursive: true });
    writeFileSync(historyFile, toJsonl(history));
    // the final streams and ledger beside it: an anomaly is traced from these three alone
    writeFileSync(historyFile.replace(/(\.jsonl)?$/, ".store.json"), JSON.stringify({ events, ledger }));
    const unclean = [...cluster.crashes.map((c) => ({ server: c.server, code: c.code, output: c.output, crashed: true })), ...stopped.filter((s) => s.code !== 0).map((s) => ({ ...s, crashed: false }))];
    return { summary: summarize({ store: o.store, seed: o.seed, seconds: o.seconds, defect: o.defect ?? null, history, events, ledger, anomalies, crashes: cluster.crashes.length }), anomalies, history, events, ledger, historyFile, unclean, output: stopped.map((s) => s.output) };
  } finally {
    if (!stopped) await cluster.stop().catch(() => undefined);
  }
}

async function registerTerminals(cluster: Cluster, apiKey: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const res = await fetch(`${cluster.urlOf(0)}/v2/hardware`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ external_account_id: ACCOUNT, terminal_type: "A_async" }),
    });
    if (!res.ok) throw new Error(`registering a terminal: ${res.status} ${await res.text()}`);
    ids.push(((await res.json()) as { terminal_id: string }).terminal_id);
  }
  return ids;
}

/** Waits (bounded) until no payment has a processor call in flight: the reconciler closed them. */
async function settled(cluster: Cluster, timeoutMs: number): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; ) {
    const streams = new Map<string, RecordedEvent[]>();
    for (const e of await cluster.events()) if (e.stream.startsWith(PAYMENT_STREAM)) streams.set(e.stream, [...(streams.get(e.stream) ?? []), e]);
    const open = [...streams].filter(([stream, events]) => foldPayment(stream, events).states.at(-1)?.context.attempt);
    if (open.length === 0) return;
    await new Promise((r) => setTimeout(r, 1_000));
  }
}
