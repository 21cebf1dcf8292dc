// Faults scheduled from the seed: every few seconds one of SIGKILL and restart of a server process,
// PostgreSQL connections terminated (pg_terminate_backend), the database stopped and started (the
// embedded one only), the sandbox processor slowed down, or losing calls (requests before it acts,
// answers after: outcomes unknown, left to the reconciler). One fault at a time; each start and
// end goes into the history.
import type { Cluster } from "./cluster.js";
import type { Fault, FaultKind } from "./history.js";
import type { Random } from "./random.js";

export interface PlannedFault {
  /** When it starts (ms after the run started). */
  at: number;
  kind: FaultKind;
  /** How long it lasts (a server down, the database stopped, the processor faulty). */
  ms: number;
  server?: number;
  latencyMs?: number;
  lose?: "request" | "answer";
}

/** The faults of a run of `seconds`, from its generator: the same seed, the same plan. */
export function planFaults(rng: Random, seconds: number, cluster: Pick<Cluster, "store" | "servers" | "postgres">): PlannedFault[] {
  const weights: Partial<Record<FaultKind, number>> = { kill: 3, processor_delay: 2, processor_timeout: 3 };
  if (cluster.store === "postgres") weights.terminate_connections = 2;
  if (cluster.postgres) weights.database_restart = 2;
  const plan: PlannedFault[] = [];
  for (let at = rng.between(1_500, 3_000); at < seconds * 1_000 - 2_000; ) {
    const kind = rng.weighted(weights);
    const fault: PlannedFault = { at, kind, ms: 0 };
    if (kind === "kill") Object.assign(fault, { server: rng.int(0, cluster.servers - 1), ms: rng.between(300, 2_000) });
    if (kind === "database_restart") fault.ms = rng.between(1_000, 3_000);
    if (kind === "processor_delay") Object.assign(fault, { latencyMs: rng.between(500, 3_500), ms: rng.between(2_000, 5_000) });
    if (kind === "processor_timeout") Object.assign(fault, { lose: rng.pick(["request", "answer"] as const), ms: rng.between(1_500, 4_000) });
    plan.push(fault);
    at += fault.ms + rng.between(2_000, 5_000);
  }
  return plan;
}

/** Runs the plan against the cluster (times from `now()`), recording each fault; stops early when `stopped()`. */
export async function injectFaults(plan: readonly PlannedFault[], cluster: Cluster, now: () => number, record: (f: Fault) => void, stopped: () => boolean): Promise<void> {
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));
  for (const f of plan) {
    await sleep(f.at - now());
    if (stopped()) return;
    const mark = (phase: Fault["phase"], detail?: string) => record({ type: "fault", t: now(), kind: f.kind, phase, ...(detail ? { detail } : {}) });
    mark("start", describe(f));
    // a server that does not come back is a crash the cluster records; the run goes on without it
    mark("end", await inject(f, cluster, sleep).catch((error: unknown) => `failed: ${String(error).split("\n")[0]}`));
  }
}

function describe(f: PlannedFault): string | undefined {
  switch (f.kind) {
    case "kill":
      return `SIGKILL server ${f.server}, restarted after ${f.ms.toFixed(0)} ms`;
    case "database_restart":
      return `PostgreSQL stopped for ${f.ms.toFixed(0)} ms`;
    case "processor_delay":
      return `processor answers ${f.latencyMs!.toFixed(0)} ms later for ${f.ms.toFixed(0)} ms`;
    case "processor_timeout":
      return `processor loses half the ${f.lose === "request" ? "requests" : "answers"} for ${f.ms.toFixed(0)} ms`;
    default:
      return undefined;
  }
}

/** Injects the fault and lifts it; answers what it did, when only known then. */
async function inject(f: PlannedFault, cluster: Cluster, sleep: (ms: number) => Promise<unknown>): Promise<string | undefined> {
  switch (f.kind) {
    case "kill":
      await cluster.kill(f.server!);
      await sleep(f.ms);
      await cluster.start(f.server!);
      return undefined;
    case "terminate_connections":
      return `${await cluster.terminateConnections()} connections terminated`;
    case "database_restart":
      await cluster.postgres!.pause();
      await sleep(f.ms);
      await cluster.postgres!.resume();
      return undefined;
    case "processor_delay":
    case "processor_timeout":
      cluster.processorFault(f.kind === "processor_delay" ? { latency_ms: Math.round(f.latencyMs!) } : { lose: f.lose!, rate: 0.5, latency_ms: 200 });
      await sleep(f.ms);
      cluster.processorFault(null);
      return undefined;
  }
}
