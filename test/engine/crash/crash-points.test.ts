// Crash at every point of every processor call: a fault thrown right after the attempt is
// appended, right after the processor answered, and right after the outcome is appended. Then a
// restart (a new engine on the same store; the processors keep their own ledger) and one
// reconciler pass: cardflow's events agree with the processor's ledger, no attempt is left open,
// and the client's retry of the command does not make the processor act a second time.
import { describe, expect, it } from "vitest";
import type { AttemptEvent } from "../../../machines/events.js";
import { manualClock } from "../../../src/clock.js";
import { createEngine } from "../../../src/engine.js";
import { CardflowError } from "../../../src/errors.js";
import { sequentialIds } from "../../../src/ids.js";
import { createSimulators } from "../../../src/processors/simulator.js";
import { createMemoryStore } from "../../../src/store/memory/index.js";
import { disagreements, effects, openAccounts, POINTS, SCENARIOS, type Point } from "./scenarios.js";

class Crash extends Error {}

const matrix: string[] = [];

describe.each(Object.entries(SCENARIOS))("%s", (name, scenario) => {
  it.each(POINTS)("crash %s, restart, one reconciler pass", async (point: Point) => {
    const clock = manualClock();
    const store = createMemoryStore();
    const sims = createSimulators({ clock, ids: sequentialIds(500_000) });
    let armed = false;
    const fault = (at: Point, attempt: AttemptEvent) => {
      if (armed && at === point && attempt.type === scenario.attempt) {
        armed = false;
        throw new Crash(`crash ${at}`);
      }
    };
    const first = createEngine({ store, processors: sims, clock, ids: sequentialIds(), fault });
    await openAccounts(first);
    const prepared = await scenario.prepare(first);
    armed = true;
    await expect(scenario.run(first, prepared)).rejects.toBeInstanceOf(Crash);

    // the restart: the first process is gone; its attempt may be open
    const second = createEngine({ store, processors: sims, clock, ids: sequentialIds(1_000_000) });
    await clock.advance(60_000);
    const report = await second.reconcile();
    expect(await disagreements(second, sims)).toEqual([]);
    const after = await second.getPayment(prepared.ref);

    // the client retries: acted on once at most
    const retry = await scenario.run(second, prepared).then(
      () => "done",
      (error: unknown) => {
        if (!(error instanceof CardflowError)) throw error;
        return `refused ${(error as CardflowError & { status?: number }).status}`;
      },
    );
    expect(await disagreements(second, sims)).toEqual([]);
    const done = await effects(second, sims, prepared.ref.payment_id);
    for (const [call, n] of Object.entries(done)) expect(n, `${name}: ${call}`).toBe(1);
    matrix.push(`| ${name} | ${point} | ${report.found} | ${report.resolved.map((r) => `${r.processor} → ${r.appended.join(" + ")}`).join("; ") || "—"} | ${after.status} | ${retry} | ${JSON.stringify(done)} |`);
  });
});

describe("the crash matrix", () => {
  it("covered every command at every point", () => {
    expect(matrix).toHaveLength(Object.keys(SCENARIOS).length * POINTS.length);
    console.info(["| command | crash | open after restart | reconciler: processor says → appended | status | client retry | processor effects |", "|---|---|---|---|---|---|---|", ...matrix].join("\n"));
  });
});
