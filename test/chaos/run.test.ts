// The chaos run in CI: 60 s per store with a fixed seed (29, whose plan injects every kind of fault
// the store allows), real server processes as shipped, and the history checker's verdict: no
// anomaly, no server crashed. On failure the failing payment's history alone is printed.
import { describe, expect, it } from "vitest";
import { runChaos } from "../../scripts/chaos/run.js";
import { paymentHistory, table } from "../../scripts/chaos/summary.js";

const SEED = 29;
const FAULTS = { sqlite: ["kill", "processor_delay", "processor_timeout"], postgres: ["kill", "terminate_connections", "database_restart", "processor_delay", "processor_timeout"] };

describe.each(["sqlite", "postgres"] as const)("chaos run on %s", (store) => {
  it(`60 s, seed ${SEED}: every kind of fault injected, operations of every kind answered, no anomaly`, { timeout: 600_000 }, async () => {
    const result = await runChaos({ store, seconds: 60, seed: SEED });
    console.info(`[figures] ${table(result.summary)}`);
    const failing = result.anomalies.find((a) => a.payment_id !== null)?.payment_id;
    if (failing) console.error(paymentHistory(failing, result.history, result.events, result.ledger, result.anomalies));
    for (const u of result.unclean) console.error(`server ${u.server} ${u.crashed ? "crashed" : "did not stop cleanly"} (exit ${u.code}):\n${u.output.slice(-4_000)}`);

    expect(Object.keys(result.summary.faults).sort()).toEqual([...FAULTS[store]].sort());
    // the workload reached every operation (answered), and the main flow's steps took effect
    for (const [kind, row] of Object.entries(result.summary.operations)) expect(row.ok + row.refused, `${kind} answered`).toBeGreaterThan(0);
    expect(Object.keys(result.summary.operations).sort()).toEqual(["authorize", "cancel", "capture", "collect", "create", "list_cards", "list_payments", "list_terminals", "present_card", "read", "refund", "save_card"]);
    for (const kind of ["create", "authorize", "capture", "cancel", "refund", "read"]) expect(result.summary.operations[kind]!.ok, `${kind} answered ok`).toBeGreaterThan(0);
    expect(result.anomalies.slice(0, 20)).toEqual([]);
    expect(result.unclean.map((u) => `server ${u.server} ${u.crashed ? "crashed" : `exit ${u.code}`}`)).toEqual([]);
  });
});
