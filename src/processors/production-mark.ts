// A store that production served holds real payments: the sandbox's simulated processors must
// never act on it. A sandbox reconciler would ask the simulators' ledger about a real processor's
// call, hear "never received", abandon the attempt, and a retry would charge the card again; a
// sandbox server would approve new payments with simulated money. So every production process
// (a server, `cardflow reconcile`) counts itself in a named sequence of the store, as request ids
// are reserved (src/ids.ts; every store has them), and a sandbox process refuses a store counted
// there, before any simulator is set up or its ledger file created.
import { ConfigurationError } from "../config.js";
import type { IdSequences } from "../store/port/ids.js";

export const PRODUCTION_PROCESSES = "production_processes";

/** Production: counts this process. Sandbox: refuses a store production has served. */
export async function markOrRefuseProductionStore(store: IdSequences, sandbox: boolean): Promise<void> {
  if (!sandbox) {
    await store.reserveIds(PRODUCTION_PROCESSES, 1);
    return;
  }
  // reserving none reads the next number without taking one: 1 when no production process ran
  const ran = (await store.reserveIds(PRODUCTION_PROCESSES, 0)) - 1;
  if (ran > 0) {
    throw new ConfigurationError(
      `this store holds production payments (${ran} production process${ran === 1 ? "" : "es"} served it): the sandbox's simulated processors never act on it. Run with NODE_ENV=production and PROCESSORS_MODULE, or give the sandbox a store of its own (DATA_DIR, DATABASE_URL)`,
    );
  }
}
