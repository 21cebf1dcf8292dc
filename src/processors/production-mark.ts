// A store that production served holds real payments: the sandbox's simulated processors must
// never act on it. A sandbox reconciler would ask the simulators' ledger about a real processor's
// call, hear "never received", abandon the attempt, and a retry would charge the card again; a
// sandbox server would approve new payments with simulated money. So every production process
// (a server, `cardflow reconcile`) counts itself in a named sequence of the store, as request ids
// are reserved (src/ids.ts; every store has them), and a sandbox process refuses a store counted
// there, before any simulator is set up or its ledger file created.
//
// A sandbox already running when production first comes to its store stops too: it reads the count
// again every PRODUCTION_WATCH_MS (and before each reconciler pass) and ends the process once it is
// above 0. Production, once counted, waits PRODUCTION_START_WAIT_MS before it serves or reconciles
// when a sandbox process ever counted itself on the store (SANDBOX_PROCESSES), so a live one has
// seen it and stopped before production's first processor call. Each side writes its own count
// before it reads the other's: of a sandbox and a production process starting together, at least
// one sees the other (the sandbox refuses, or production waits). Once one production process has
// waited (SANDBOXES_STOPPED), no sandbox can run on the store again (each refuses itself once
// counted), so the production processes after it do not wait.
import { ConfigurationError } from "../config.js";
import type { IdSequences } from "../store/port/ids.js";

export const PRODUCTION_PROCESSES = "production_processes";
export const SANDBOX_PROCESSES = "sandbox_processes";
/** Counted by a production process that waited out the sandbox processes counted before it. */
export const SANDBOXES_STOPPED = "sandboxes_stopped";
/** How often a sandbox process reads the production count again. */
export const PRODUCTION_WATCH_MS = 1_000;
/** How long production waits, once counted, on a store a sandbox ran on: the watch's period and a margin. */
export const PRODUCTION_START_WAIT_MS = 2 * PRODUCTION_WATCH_MS;

/** The number of a named sequence's processes: reserving none reads the next number without taking one (1 when none ran). */
const counted = async (store: IdSequences, sequence: string) => (await store.reserveIds(sequence, 0)) - 1;

/** The sandbox's refusal of a store production served (at start, or once production came while it ran). */
export class ProductionStore extends ConfigurationError {
  constructor(ran: number, running: boolean) {
    const served = `${ran} production process${ran === 1 ? "" : "es"} served it`;
    super(
      running
        ? `a production process started on this store (${served}): the sandbox's simulated processors never act on production payments, so this sandbox process stops. Give the sandbox a store of its own (DATA_DIR, DATABASE_URL)`
        : `this store holds production payments (${served}): the sandbox's simulated processors never act on it. Run with NODE_ENV=production and PROCESSORS_MODULE, or give the sandbox a store of its own (DATA_DIR, DATABASE_URL)`,
    );
  }
}

async function refuseIfProduction(store: IdSequences, running: boolean): Promise<void> {
  const ran = await counted(store, PRODUCTION_PROCESSES);
  if (ran > 0) throw new ProductionStore(ran, running);
}

/**
 * Production: counts this process, and answers how long to wait before serving (0 on a store no
 * sandbox ran on). Sandbox: refuses a store production has served, else counts this process.
 * `count` false (a process that appends nothing: `cardflow reconcile --dry-run`): not counted
 * (a dry run in production does not end a sandbox nor close the store to it for good).
 */
export async function markOrRefuseProductionStore(store: IdSequences, sandbox: boolean, { count = true }: { count?: boolean } = {}): Promise<{ waitMs: number }> {
  if (!sandbox) {
    if (!count) return { waitMs: 0 };
    await store.reserveIds(PRODUCTION_PROCESSES, 1);
    const live = (await counted(store, SANDBOX_PROCESSES)) > 0 && (await counted(store, SANDBOXES_STOPPED)) === 0;
    return { waitMs: live ? PRODUCTION_START_WAIT_MS : 0 };
  }
  await refuseIfProduction(store, false);
  if (!count) return { waitMs: 0 };
  await store.reserveIds(SANDBOX_PROCESSES, 1);
  // again, now that this process is counted: a production process counted meanwhile did not see it
  await refuseIfProduction(store, false);
  return { waitMs: 0 };
}

/**
 * Production, after its wait: every sandbox process counted before it has seen it and stopped, and
 * any counted later refuses itself (production's count is above 0 for good), so no later
 * production process waits.
 */
export async function markSandboxesStopped(store: IdSequences): Promise<void> {
  await store.reserveIds(SANDBOXES_STOPPED, 1);
}

export interface ProductionWatch {
  /** Reads the count now: `stop` is called, and this throws, once production counted itself. */
  check(): Promise<void>;
  /** Ends the periodic reads. */
  close(): void;
}

/**
 * A running sandbox process's watch: the production count read every `periodMs`; once it is above
 * 0, `stop(refusal)` (the process ends: no processor call, no reconciler decision after it). A read
 * that fails (the store unreachable) is tried again at the next period.
 */
export function watchProductionMark(store: IdSequences, stop: (refusal: ProductionStore) => void, periodMs = PRODUCTION_WATCH_MS): ProductionWatch {
  let stopped = false;
  const check = async () => {
    try {
      await refuseIfProduction(store, true);
    } catch (error) {
      if (error instanceof ProductionStore && !stopped) {
        stopped = true;
        stop(error);
      }
      throw error;
    }
  };
  const timer = setInterval(() => void check().catch(() => undefined), periodMs);
  timer.unref();
  return { check, close: () => clearInterval(timer) };
}
