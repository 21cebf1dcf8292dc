// `cardflow diagram --diff` in an installed package (cardflow under node_modules): a file or a
// release; a git ref is refused with what to do instead (the package has no repository to read a
// ref from).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it, vi } from "vitest";
import { machineDefinition, machineJson } from "../../machines/definition.js";
import { cardflow } from "./run-cli.js";

vi.mock("../../src/package-root.js", async (importOriginal) => ({
  ...(await importOriginal<typeof import("../../src/package-root.js")>()),
  packageRoot: "/srv/app/node_modules/cardflow",
}));

const dir = mkdtempSync(join(tmpdir(), "cardflow-diff-installed-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it("takes a file, refuses a git ref naming the way to a file", async () => {
  const file = join(dir, "base.json");
  writeFileSync(file, machineJson(machineDefinition()));
  expect(await cardflow("diagram", "--diff", file, "--format", "markdown")).toMatchObject({ code: 0, out: expect.stringContaining("No change to states, transitions, guards or events.") });
  expect(await cardflow("diagram", "--diff", "main")).toMatchObject({
    code: 2,
    out: "",
    err: "cardflow: --diff: no file or release main; an installed cardflow compares with a release (docs/machines/releases.json) or a file (e.g. `git show main:docs/machine.json > base.json` in your checkout, then --diff base.json)\n",
  });
});
