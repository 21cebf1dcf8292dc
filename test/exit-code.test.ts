// `npm test` / `npx vitest run` must fail when a test fails. Runs vitest in a child process on the
// fixtures in test/fixtures/exit-code/ (outside the main `include`), with the same PostgreSQL
// globalSetup as the real suite: embedded PostgreSQL started by the run, and an existing server
// given by DATABASE_URL.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, inject, it } from "vitest";

const vitest = fileURLToPath(new URL("../node_modules/vitest/vitest.mjs", import.meta.url));
const config = fileURLToPath(new URL("./fixtures/exit-code/vitest.config.ts", import.meta.url));

/** Exit code of `vitest run` over one fixture; VITEST* variables of this run are not passed on. */
function runFixture(fixture: "failing" | "passing", env: Record<string, string> = {}): Promise<number | null> {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("VITEST") && k !== "DATABASE_URL"));
  const child = spawn(process.execPath, [vitest, "run", "--config", config], {
    env: { ...inherited, NODE_ENV: "test", FIXTURE: fixture, ...env },
    stdio: "ignore",
  });
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) => resolve(code));
  });
}

describe("the exit code of a test run", () => {
  it("is non-zero when a test fails, with the embedded PostgreSQL of the run", async () => {
    expect(await runFixture("failing")).toBe(1);
  });

  it("is non-zero when a test fails, with PostgreSQL given by DATABASE_URL", async () => {
    expect(await runFixture("failing", { DATABASE_URL: inject("postgresUrl") })).toBe(1);
  });

  it("is 0 when every test passes, with the embedded PostgreSQL of the run", async () => {
    expect(await runFixture("passing")).toBe(0);
  });
});
