// The chaos run in CI (issue 29): 60 s per store with seed 29 against real server processes as
// shipped (2 on one SQLite data directory; 3 on one embedded PostgreSQL, which the run stops and
// starts), faults injected, the whole history checked. It must come out with no anomaly and no
// server crash. The seed fixes the operations and the fault plan; the machine's load changes the
// interleavings, never the verdict. On failure the failing payment's history is printed alone, and
// on a 500 the servers' last output; the anomalies are named again at the end.
import { describe, expect, it } from "vitest";
import { runChaos } from "../../scripts/chaos/run.js";
import { paymentHistory, table } from "../../scripts/chaos/summary.js";

describe.each(["sqlite", "postgres"] as const)("a 60 s chaos run on %s, seed 29", (store) => {
  it("has no anomaly and no server crash", { timeout: 600_000 }, async () => {
    const result = await runChaos({ store, seconds: 60, seed: 29 });
    console.info(`[figures] chaos ${store} 60 s seed 29\n${table(result.summary)}`);
    const failing = result.anomalies.find((a) => a.payment_id !== null)?.payment_id;
    const report = [
      ...result.anomalies.slice(0, 20).map((a) => `anomaly ${a.check}:${a.kind}: ${a.message}`),
      ...(failing ? [paymentHistory(failing, result.history, result.events, result.ledger, result.anomalies)] : []),
      ...(result.anomalies.some((a) => a.kind === "server_error") ? result.output.map((o, i) => `server ${i}'s last output:\n${o.slice(-4_000)}`) : []),
      ...result.unclean.map((u) => `server ${u.server} ${u.crashed ? "crashed" : "did not stop cleanly"} (exit ${u.code}):\n${u.output.slice(-4_000)}`),
      `history: ${result.historyFile}`,
      // again last: a CI log that keeps only its tail still names what was found
      ...result.anomalies.slice(0, 5).map((a) => `anomaly ${a.check}:${a.kind}: ${a.message}`),
    ].join("\n");
    expect(result.anomalies.length + result.unclean.length, report).toBe(0);
  });
});
