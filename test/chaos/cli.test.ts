// `npm run chaos`'s exit codes: 1 is a run that found anomalies, so a usage error exits 2 (as the
// cardflow CLI's do) and never reads as one.
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const CLI = fileURLToPath(new URL("../../scripts/chaos/cli.ts", import.meta.url));

async function chaos(...args: string[]) {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ["--import", "tsx", CLI, ...args]);
    return { code: 0, out: stdout, err: stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, out: e.stdout, err: e.stderr };
  }
}

describe("npm run chaos", () => {
  it("exits 2 on a usage error, 0 for --help", { timeout: 60_000 }, async () => {
    const store = await chaos("--store", "mysql");
    expect(store.code).toBe(2);
    expect(store.err).toContain("option '--store <kind>' argument 'mysql' is invalid");
    expect((await chaos("--no-such-option")).code).toBe(2);
    expect(await chaos("--help")).toMatchObject({ code: 0, out: expect.stringContaining("--store <kind>") });
  });
});
