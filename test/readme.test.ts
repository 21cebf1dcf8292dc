// README.md's embedding example is run as it is written, so it cannot rot: its output must be
// what its last line's comment says.
import { execFile } from "node:child_process";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);

describe("README.md", () => {
  it("the embedding example runs and prints what it says", async () => {
    const readme = await readFile("README.md", "utf8");
    const block = /<!-- readme-example: embedding[^>]*-->\s*```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(block, "README.md has the embedding example").toBeDefined();
    const expected = /console\.log\([^)]*\);\s*\/\/ (.+)\n?$/.exec(block!.trim())?.[1];
    expect(expected, "the example ends with console.log(...); // expected output").toBeDefined();
    await mkdir(".tmp", { recursive: true });
    await writeFile(".tmp/readme-embedding.ts", block!);
    // `import "cardflow"` resolves to the sources in a checkout (package.json exports, condition cardflow-source)
    const { stdout } = await run(process.execPath, ["--conditions=cardflow-source", "--import", "tsx", ".tmp/readme-embedding.ts"]);
    expect(stdout.trim()).toBe(expected);
  });
});
