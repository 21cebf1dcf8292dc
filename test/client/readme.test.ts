// README.md's typed-client example runs as written against the real server (its KEY and BASE from
// the environment, as the curl walk-through's), twice in a row, with `tsx` and nothing else (no
// loader flag: tsconfig.json's paths), and each `// ` comment after a console.log is what that
// line prints. (test/package/package.test.ts runs it from the installed package.)
import { execFile } from "node:child_process";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApi, type Api } from "../http/harness.js";

const run = promisify(execFile);
let api: Api;
beforeAll(async () => {
  api = await startApi();
});
afterAll(() => api.close());

describe("README.md typed client example", () => {
  it("runs against the server twice in a row and prints what its comments say", async () => {
    const readme = await readFile("README.md", "utf8");
    const block = /<!-- readme-example: client[^>]*-->\s*```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(block, "README.md has the client example").toBeDefined();
    const expected = [...block!.matchAll(/console\.log\([^;]*\);\s*\/\/ (.+)$/gm)].map((m) => m[1]);
    expect(expected.length).toBeGreaterThan(2);
    const { key } = await api.merchant("acct_demo");
    await mkdir(".tmp", { recursive: true });
    await writeFile(".tmp/readme-client.ts", block!);
    // as a reader runs it: `npx tsx example.ts` in the checkout (`cardflow/client`: tsconfig.json's paths)
    for (const _time of [1, 2]) {
      const { stdout } = await run(process.execPath, ["node_modules/tsx/dist/cli.mjs", ".tmp/readme-client.ts"], { env: { ...process.env, BASE: api.base, KEY: key } });
      expect(stdout.trim().split("\n")).toEqual(expected);
    }
  });
});
