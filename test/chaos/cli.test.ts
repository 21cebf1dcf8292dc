// `npm run chaos`'s exit codes: 1 is a run that found anomalies, so a usage error exits 2 (as the
// cardflow CLI's do) and never reads as one.
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { nodeProcess } from "../audit/run-cli.js";

const CLI = fileURLToPath(new URL("../../scripts/chaos/cli.ts", import.meta.url));

const chaos = (...args: string[]) => nodeProcess(["--import", "tsx", CLI, ...args]);

describe("npm run chaos", () => {
  it("exits 2 on a usage error, 0 for --help", { timeout: 60_000 }, async () => {
    const store = await chaos("--store", "mysql");
    expect(store.code).toBe(2);
    expect(store.err).toContain("option '--store <kind>' argument 'mysql' is invalid");
    expect((await chaos("--no-such-option")).code).toBe(2);
    // numbers that cannot mean a run (NaN seconds ran forever; 0 workers ran nothing and passed)
    for (const [option, value] of [["--seconds", "abc"], ["--seconds", "0"], ["--seconds", "-1"], ["--workers", "0"], ["--payments", "1.5"], ["--seed", "x"]]) {
      expect(await chaos(option!, value!), `${option} ${value}`).toMatchObject({ code: 2, err: expect.stringContaining(`chaos: ${option}: expected a whole number`) });
    }
    expect(await chaos("--help")).toMatchObject({ code: 0, out: expect.stringContaining("--store <kind>") });
  });
});
