// The signing key made on first start (DATA_DIR/webhook-signing.key) is one key for every process on
// the data directory, even when they start together: it signs webhooks and seals the Idempotency-Key
// answers another process replays (a CI chaos run's second server had read the file empty, while the
// first was still writing it, and answered 500 to every replay of the first's answers).
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, describe, expect, it } from "vitest";
import { fileSide } from "../../src/processors/processor-side.js";
import { loadSigningKey } from "../../src/webhooks/config.js";
import { SERVER_NODE_ARGS } from "../support/server-args.js";

const root = mkdtempSync(join(tmpdir(), "cardflow-signing-key-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const config = new URL("../../src/webhooks/config.ts", import.meta.url).pathname;

/**
 * `processes` node processes load the key from the same `rounds` fresh directories: once all are
 * ready, each starts round i at the same moment (a shared start time plus i × 20 ms). Returns the
 * keys each process read, by round.
 */
async function loadTogether(processes: number, rounds: number): Promise<string[][]> {
  const script = `import { loadSigningKey } from ${JSON.stringify(config)};
    import { createInterface } from "node:readline";
    console.log("ready");
    const start = Number(await createInterface({ input: process.stdin })[Symbol.asyncIterator]().next().then((l) => l.value));
    for (let i = 0; i < ${rounds}; i++) {
      while (Date.now() < start + i * 20);
      console.log(loadSigningKey(${JSON.stringify(root)} + "/round-" + i, {}).toString("hex"));
    }`;
  const children = Array.from({ length: processes }, () => spawn(process.execPath, [...SERVER_NODE_ARGS, "--input-type=module", "-e", script], { stdio: ["pipe", "pipe", "inherit"] }));
  const lines = children.map((child) => {
    const out: string[] = [];
    const ready = new Promise<void>((resolve) => createInterface({ input: child.stdout! }).on("line", (line) => (line === "ready" ? resolve() : out.push(line))));
    const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
    return { out, ready, exited };
  });
  await Promise.all(lines.map((l) => l.ready));
  const start = Date.now() + 200;
  for (const child of children) child.stdin!.end(`${start}\n`);
  expect(await Promise.all(lines.map((l) => l.exited))).toEqual(children.map(() => 0));
  return lines.map((l) => l.out);
}

describe("the webhook signing key file", () => {
  it("is one key for processes that make it at the same moment", { timeout: 60_000 }, async () => {
    const rounds = 40;
    const read = await loadTogether(6, rounds);
    for (let i = 0; i < rounds; i++) {
      const keys = new Set(read.map((keys) => keys[i]));
      expect([...keys], `round ${i}`).toHaveLength(1);
      expect([...keys][0], `round ${i}`).toMatch(/^[0-9a-f]{64}$/);
      expect(loadSigningKey(join(root, `round-${i}`), {}).toString("hex")).toBe([...keys][0]);
    }
  });

  it("refuses a file that holds no key, naming it, instead of signing with an empty key", () => {
    for (const [name, text] of [["empty", ""], ["short", "abcd\n"], ["not-hex", "z".repeat(64)]] as const) {
      const dir = join(root, name);
      loadSigningKey(dir, {}); // made
      writeFileSync(join(dir, "webhook-signing.key"), text);
      expect(() => loadSigningKey(dir, {}), name).toThrow(`${join(dir, "webhook-signing.key")}: expected at least 32 bytes as hex`);
    }
  });

  it("takes WEBHOOK_SIGNING_KEY over the file, and refuses one too short", () => {
    const key = "ab".repeat(32);
    expect(loadSigningKey(join(root, "configured"), { WEBHOOK_SIGNING_KEY: key }).toString("hex")).toBe(key);
    expect(() => loadSigningKey(join(root, "configured"), { WEBHOOK_SIGNING_KEY: "ab" })).toThrow("WEBHOOK_SIGNING_KEY: expected at least 32 bytes as hex");
  });

  it("a data directory that is a file, or under one: refused naming the setting, not a bare EEXIST", () => {
    const file = join(root, "a-file");
    writeFileSync(file, "");
    for (const dir of [file, join(file, "sub")]) {
      expect(() => loadSigningKey(dir, {}), dir).toThrow(`the data directory (DATA_DIR, --data-dir) ${dir}: a file is in the way: give a directory`);
      // the sandbox's processor ledger in it (with a PostgreSQL store, the first thing made there)
      expect(() => fileSide(join(dir, "simulators.sqlite")), dir).toThrow(`the data directory (DATA_DIR, --data-dir) ${dir}: a file is in the way: give a directory`);
    }
  });
});
