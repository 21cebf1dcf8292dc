// `cardflow serve --store sqlite:<a file not named cardflow.sqlite>` (and npm start with that store
// in CARDFLOW_STORE), as an operator runs it: the
// banner's hint to create an account names that store (CARDFLOW_STORE, which every command takes
// like --store), and the key the hint's command prints opens the server's account. A --port that
// is not a port number is refused naming it.
import { execFile, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, expect, it } from "vitest";
import { cardflow } from "../audit/run-cli.js";
import { freePort } from "../support/postgres.js";
import { SERVER_NODE_ARGS } from "../support/server-args.js";

const BIN = fileURLToPath(new URL("../../bin/cardflow.js", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "cardflow-serve-store-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

// `npm start` runs src/main.ts, with CARDFLOW_STORE where serve takes --store (docs/OPERATIONS.md: the same variables)
it.each([
  ["cardflow serve --store", (port: number, store: string) => ({ args: [BIN, "serve", "--port", String(port), "--host", "127.0.0.1", "--store", store], env: {} })],
  ["npm start with CARDFLOW_STORE", (port: number, store: string) => ({ args: ["src/main.ts"], env: { PORT: String(port), HOST: "127.0.0.1", CARDFLOW_STORE: store } })],
])("%s: the banner's account hint for a SQLite file of another name opens the served store: its key answers 200", { timeout: 120_000 }, async (how, started) => {
  const port = await freePort();
  const store = `sqlite:${join(dir, how.replaceAll(" ", "-"), "other.sqlite")}`;
  const { args, env } = started(port, store);
  const child = spawn(process.execPath, [...SERVER_NODE_ARGS, ...args], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: "", DATA_DIR: "", CARDFLOW_STORE: "", METRICS_PORT: String(await freePort()), SHUTDOWN_GRACE_MS: "0", ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  let stderr = "";
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  for (let waited = 0; !stderr.includes("--exists-ok"); waited += 100) {
    if (child.exitCode !== null || waited > 90_000) throw new Error(`the server did not come up:\n${stderr}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  expect(stderr).toContain(`(store: SQLite ${store.slice("sqlite:".length)};`);
  const hint = /^ {2}(\S+)=(\S+) npx cardflow (accounts create acct_demo --exists-ok)$/m.exec(stderr);
  expect(hint, stderr).not.toBeNull();
  const [, name, value, command] = hint!;
  expect(`${name}=${value}`).toBe(`CARDFLOW_STORE=${store}`);

  const { stdout } = await promisify(execFile)(process.execPath, [BIN, ...command!.split(" ")], { env: { ...process.env, DATABASE_URL: "", DATA_DIR: join(dir, "elsewhere"), [name!]: value } });
  const answer = await fetch(`http://127.0.0.1:${port}/v2/hardware?external_account_id=acct_demo`, { headers: { authorization: `Bearer ${stdout.trim()}` } });
  expect(answer.status).toBe(200);
  child.kill("SIGTERM");
  expect(await exited).toBe(0);
});

it("a --port that is not a port number is refused naming --port (exit 2), before anything starts", async () => {
  for (const given of ["abc", "99999", "-1", "80.5"]) {
    const refused = await cardflow("serve", "--port", given, "--store", "memory");
    expect(refused, given).toMatchObject({ code: 2, out: "", err: `cardflow: --port: expected a port number from 0 to 65535, got ${JSON.stringify(given)}\n` });
  }
  // --workers is read as a setting's number is: decimal digits, no spaces around them
  for (const given of [" 2", "2 ", "0x2", "1e1"]) {
    expect(await cardflow("serve", "--workers", given, "--store", "memory"), JSON.stringify(given)).toMatchObject({ code: 2, out: "", err: `cardflow: --workers: expected a whole number from 1 to 64, got ${JSON.stringify(given)}\n` });
  }
  // an empty store path is refused too (it was this folder for serve, data/ for the other commands)
  expect(await cardflow("serve", "--data-dir", "")).toMatchObject({ code: 2, out: "", err: "cardflow: --data-dir: needs a directory\n" });
  expect(await cardflow("serve", "--store", "sqlite:")).toMatchObject({ code: 2, out: "", err: "cardflow: --store: sqlite:PATH needs a path\n" });
  // two options naming the store: refused; an option and CARDFLOW_STORE (--store's variable): the option wins, as every option over its variable
  expect(await cardflow("serve", "--store", "memory", "--data-dir", dir)).toMatchObject({ code: 2, out: "", err: "cardflow: --store and --data-dir each name the store: give one of them\n" });
  const saved = process.env.CARDFLOW_STORE;
  process.env.CARDFLOW_STORE = "memory";
  try {
    // (reaches the option's own check: it was "option '--data-dir <dir>' cannot be used with environment variable 'CARDFLOW_STORE'")
    expect(await cardflow("serve", "--data-dir", "")).toMatchObject({ code: 2, out: "", err: "cardflow: --data-dir: needs a directory\n" });
    expect(await cardflow("serve", "--database-url", "mysql://x", "--port", "x")).toMatchObject({ code: 2, out: "", err: 'cardflow: --port: expected a port number from 0 to 65535, got "x"\n' });
    // the memory store given by CARDFLOW_STORE is named so (it said --store memory, an option not given)
    expect(await cardflow("serve", "--workers", "2")).toMatchObject({ code: 2, out: "", err: "cardflow: CARDFLOW_STORE=memory: each worker would have a store of its own; use sqlite:PATH or postgres:URL with --workers\n" });
  } finally {
    if (saved === undefined) delete process.env.CARDFLOW_STORE;
    else process.env.CARDFLOW_STORE = saved;
  }
});

it("README's refusals at start say that serve's options given wrong are a usage error, exit 2 as for every cardflow command, and they are: not `refusing to start`", async () => {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const from = readme.indexOf("### What the server refuses at start, and why");
  const section = readme.slice(from, readme.indexOf("\n## ", from));
  const said = /`cardflow serve`'s own options given wrong as written \(([^)]*)\),[^]*?are a usage error[^]*?exit 2/.exec(section);
  expect(said, "README's refusals at start name serve's usage errors").not.toBeNull();
  for (const example of ["`--workers 0`", "`--port 1e3`", "`--store`\ntogether with `--data-dir`", "`--store memory` with `--workers 2`"]) expect(said![1]).toContain(example);
  const cases: [string[], string][] = [
    [["--workers", "0"], '--workers: expected a whole number from 1 to 64, got "0"'],
    [["--port", "1e3"], '--port: expected a port number from 0 to 65535, got "1e3"'],
    [["--store", "memory", "--data-dir", dir], "--store and --data-dir each name the store: give one of them"],
    [["--store", "bogus"], '--store: unknown store "bogus"; use sqlite:PATH, postgres:URL or memory'],
    [["--store", "memory", "--workers", "2"], "--store memory: each worker would have a store of its own; use sqlite:PATH or postgres:URL with --workers"],
  ];
  for (const [args, line] of cases) expect(await cardflow("serve", ...args), args.join(" ")).toMatchObject({ code: 2, out: "", err: `cardflow: ${line}\n` });
});

it("a setting that cannot work is refused as npm start refuses it: one line `cardflow: refusing to start: …`, exit 1", { timeout: 60_000 }, async () => {
  for (const [name, value, said] of [["TRUST_PROXY", "true", "TRUST_PROXY: true (trust every hop)"], ["IDEMPOTENCY_TTL_HOURS", "0", "IDEMPOTENCY_TTL_HOURS: expected from 1 to 8760 hours"], ["SHUTDOWN_GRACE_MS", "abc", "SHUTDOWN_GRACE_MS: expected a whole number"]] as const) {
    const refused = await promisify(execFile)(process.execPath, [BIN, "serve", "--store", "memory", "--port", "0"], { env: { ...process.env, [name]: value } }).then(
      () => ({ code: 0, stderr: "" }),
      (error: { code: number; stderr: string }) => ({ code: error.code, stderr: error.stderr }),
    );
    expect(refused.code, name).toBe(1);
    expect(refused.stderr.startsWith(`cardflow: refusing to start: ${said}`), refused.stderr).toBe(true);
    expect(refused.stderr.trim().split("\n"), name).toHaveLength(1);
  }
  // a host that is no address of this host, given as --host: named as the option (it said HOST);
  // with --workers, said once by the primary before any worker made a store
  // and with --store naming a file of another name (opened before the service's own start)
  const empty = join(dir, "refused-workers");
  for (const where of [["--data-dir", empty], ["--data-dir", empty, "--workers", "2"], ["--store", `sqlite:${join(empty, "other.sqlite")}`]]) {
    const host = await promisify(execFile)(process.execPath, [BIN, "serve", ...where, "--port", "0", "--host", "192.0.2.1"], { env: { ...process.env, METRICS_PORT: "0" } }).catch((error: { code: number; stderr: string }) => error);
    expect(host).toMatchObject({ code: 1, stderr: expect.stringMatching(/^cardflow: refusing to start: --host: cannot listen on "192\.0\.2\.1" \(listen EADDRNOTAVAIL[^\n]*\n$/) });
    expect(existsSync(empty), where.join(" ")).toBe(false);
  }
  // a port another process holds: said with a free one to choose, as --port, in every way serve starts
  // (the primary of --workers and a --store file of another name said no port to choose)
  const holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
  const held = (holder.address() as { port: number }).port;
  try {
    for (const where of [["--data-dir", empty], ["--data-dir", empty, "--workers", "2"], ["--store", `sqlite:${join(empty, "other.sqlite")}`]]) {
      const taken = await promisify(execFile)(process.execPath, [BIN, "serve", ...where, "--port", String(held), "--host", "127.0.0.1"], { env: { ...process.env, METRICS_PORT: "0" } }).catch((error: { code: number; stderr: string }) => error);
      expect(taken, where.join(" ")).toMatchObject({ code: 1, stderr: expect.stringMatching(new RegExp(`^cardflow: refusing to start: port ${held} on 127\\.0\\.0\\.1 is already in use \\(another cardflow, or another service\\?\\); choose another with --port, e\\.g\\. cardflow serve --port \\d+\\n$`)) });
      expect(existsSync(empty), where.join(" ")).toBe(false);
    }
  } finally {
    holder.close();
  }
  // a --database-url that is no PostgreSQL URL: named as the option (it said DATABASE_URL)
  const url = await promisify(execFile)(process.execPath, [BIN, "serve", "--database-url", "foo"], { env: { ...process.env, METRICS_PORT: "0" } }).catch((error: { code: number; stderr: string }) => error);
  expect(url).toMatchObject({ code: 1, stderr: 'cardflow: refusing to start: --database-url: expected a postgres:// URL, got "foo"\n' });
});

it("--port 0: the banner names the port the system chose, which answers; --store memory: it prints the API key of acct_demo, which it opened (no other process can)", { timeout: 120_000 }, async () => {
  const child = spawn(process.execPath, [BIN, "serve", "--store", "memory", "--port", "0", "--host", "127.0.0.1"], { env: { ...process.env, METRICS_PORT: "0" }, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  try {
    await expect.poll(() => /listening on http:\/\/localhost:(\d+) /.exec(stderr)?.[1], { timeout: 90_000, interval: 100 }).toBeDefined();
    const port = Number(/listening on http:\/\/localhost:(\d+) /.exec(stderr)![1]);
    expect(port).toBeGreaterThan(0);
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    expect(stderr).not.toContain("npx cardflow accounts create");
    const key = /acct_demo and its API key .*\n {2}(\S+)\n/.exec(stderr)?.[1];
    expect(key, stderr).toMatch(/^sk_/);
    const terminals = await fetch(`http://127.0.0.1:${port}/v2/hardware?external_account_id=acct_demo`, { headers: { authorization: `Bearer ${key}` } });
    expect(terminals.status).toBe(200);
    expect(stderr).toContain(`curl -H "Authorization: Bearer ${key}" "http://localhost:${port}/v2/hardware?external_account_id=acct_demo"`);
  } finally {
    child.kill("SIGTERM");
    await exited;
  }
});
