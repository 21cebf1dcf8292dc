// Production mode with real processes: without an adapter for every processor the server refuses
// to start (exit code 1, the message naming what is missing); with the example HTTP adapter
// (src/processors/http-processors.ts) pointed at an HTTPS test processor on loopback — reached
// through the operator's allowlist, its test CA trusted through OUTBOUND_CA_FILE, never by turning
// verification off — it charges through it: no simulator, no /sim, no test card; a declined or
// malformed answer is never `succeeded`; processor B's client SDK routes are served by the
// adapter; a terminal's late outcome arrives through connect(report); `cardflow reconcile` asks
// the adapters what became of a call whose answer was lost, and a sandbox process refuses the store
// production served (its simulators would answer for a real call); a refund slower than the reconciler's
// grace, abandoned and retried through another process, is one refund at the processor.
import Database from "better-sqlite3";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createApiKeys } from "../../src/api-keys.js";
import { createOutbound } from "../../src/outbound/client.js";
import { checkSettings } from "../../src/processors/http-processors.js";
import { configFromEnv, openStores } from "../../src/config.js";
import { createEngine } from "../../src/engine.js";
import { createSqliteStore } from "../../src/store/sqlite/index.js";
import { client, startServer, storedEvents, type ServerProcess } from "../multiprocess/servers.js";
import { PROCESSOR_API_KEY, startHttpsProcessor, TEST_CA_FILE } from "../support/https-processor.js";
import { freePort } from "../support/postgres.js";
import { SERVER_NODE_ARGS } from "../support/server-args.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const EXAMPLE_ADAPTERS = join(ROOT, "src/processors/http-processors.ts");
const dir = mkdtempSync(join(tmpdir(), "cardflow-production-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The test server's URL with a password it does not take. */
function wrongPassword(): string {
  const url = new URL(inject("postgresUrl"));
  url.password = "not-the-password";
  return url.href;
}

/** A data directory whose `name` holds words, not a database (beside a good events' file when it is the read models'). */
async function garbageDir(name: string): Promise<string> {
  const data = mkdtempSync(join(dir, "garbage-"));
  if (name !== "cardflow.sqlite") {
    const { events, readModels } = createSqliteStore({ path: join(data, "cardflow.sqlite") });
    await Promise.all([events.close(), readModels.close()]);
  }
  writeFileSync(join(data, name), "hello world\n");
  return data;
}

/** `npm start` that must not start: its exit code and what it wrote. */
async function refusedStart(env: Record<string, string>): Promise<{ code: number | null; stderr: string; dataDir: string }> {
  const dataDir = env.DATA_DIR ?? mkdtempSync(join(dir, "refused-"));
  const child = spawn(process.execPath, [...SERVER_NODE_ARGS, "src/main.ts"], {
    cwd: ROOT,
    env: { ...process.env, SANDBOX: "", NODE_ENV: "", PORT: "0", HOST: "127.0.0.1", METRICS_PORT: "0", DATA_DIR: dataDir, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  return { code, stderr, dataDir };
}

describe("production mode refuses to start without what it needs", () => {
  it("NODE_ENV=production without processor adapters: exit 1, naming PROCESSORS_MODULE and both processors", { timeout: 60_000 }, async () => {
    const { code, stderr } = await refusedStart({ NODE_ENV: "production" });
    expect(code).toBe(1);
    expect(stderr).toMatch(/^cardflow: refusing to start: production mode \(NODE_ENV=production\) runs no simulated processor: set PROCESSORS_MODULE .* processor A and B/);
    expect(stderr).not.toMatch(/\n\s+at /); // a message, not a stack trace
  });

  it("NODE_ENV=production written another way (Production, a trailing space): exit 1, naming the value and NODE_ENV=production, nothing written; it ran the sandbox", { timeout: 60_000 }, async () => {
    for (const nearMiss of ["Production", "production "]) {
      const { code, stderr, dataDir } = await refusedStart({ NODE_ENV: nearMiss });
      expect([code, stderr.split("\n").filter(Boolean).length], JSON.stringify(nearMiss)).toEqual([1, 1]);
      expect(stderr).toBe(`cardflow: refusing to start: NODE_ENV: expected production written exactly (lower case, no spaces), got ${JSON.stringify(nearMiss)}; as written it is not production: without SANDBOX the sandbox would run (simulated processors)\n`);
      expect(readdirSync(dataDir)).toEqual([]);
    }
  });

  it("SANDBOX=off with a module serving processor A only: exit 1, naming processor B", { timeout: 60_000 }, async () => {
    // a path as README writes one (node_modules/cardflow/dist/...): relative, without ./, is a path when the file exists
    for (const onlyA of [join(ROOT, "test/fixtures/processors/only-a.mjs"), "test/fixtures/processors/only-a.mjs"]) {
      const { code, stderr } = await refusedStart({ SANDBOX: "off", PROCESSORS_MODULE: onlyA });
      expect(code, onlyA).toBe(1);
      expect(stderr, onlyA).toContain("no adapter for processor B");
    }
  });

  it("production with WEBHOOK_ALLOW_PRIVATE, TRUST_PROXY=true or a CIDR of every address, a malformed WEBHOOK_SIGNING_KEY: exit 1, naming the variable", { timeout: 60_000 }, async () => {
    // in every form it is written on (yes, as SANDBOX takes it)
    for (const on of ["1", "yes"]) {
      const privateHooks = await refusedStart({ SANDBOX: "off", WEBHOOK_ALLOW_PRIVATE: on });
      expect(privateHooks.code, on).toBe(1);
      expect(privateHooks.stderr, on).toContain("WEBHOOK_ALLOW_PRIVATE: only in the sandbox");
    }
    const trustAll = await refusedStart({ TRUST_PROXY: "true" });
    expect(trustAll.code).toBe(1);
    expect(trustAll.stderr).toContain("TRUST_PROXY: true (trust every hop)");
    // every address is every hop too; a malformed signing key is a refusal, not a stack trace
    // ...and so are CIDRs that hold every address together (two halves; IPv4-mapped IPv6)
    for (const everyAddress of ["0.0.0.0/0", "10.0.0.0/8, ::/0", "0.0.0.0/1,128.0.0.0/1", "::ffff:0:0/96", "::/1, 8000::/1"]) {
      const refused = await refusedStart({ TRUST_PROXY: everyAddress });
      expect(refused.code, everyAddress).toBe(1);
      expect(refused.stderr).toContain(`cardflow: refusing to start: TRUST_PROXY: ${everyAddress} (every address, together: trust every hop)`);
    }
    // a CA file that holds no certificate is refused at start, not at the first processor call
    const notPem = await refusedStart({ OUTBOUND_CA_FILE: join(ROOT, "README.md") });
    expect(notPem.code).toBe(1);
    expect(notPem.stderr).toMatch(/^cardflow: refusing to start: OUTBOUND_CA_FILE: .*README\.md holds no PEM certificate/);
    const badPort = await refusedStart({ PORT: "99999" });
    expect(badPort.code).toBe(1);
    expect(badPort.stderr).toMatch(/^cardflow: refusing to start: PORT: expected a port number from 0 to 65535, got "99999"/);
    const badKey = await refusedStart({ WEBHOOK_SIGNING_KEY: "abc" });
    expect(badKey.code).toBe(1);
    expect(badKey.stderr).toMatch(/^cardflow: refusing to start: WEBHOOK_SIGNING_KEY: expected at least 32 bytes as hex/);
  });

  it("a setting a library, the network or the store refuses is one line and exit 1 too, never a stack trace (docs/OPERATIONS.md)", { timeout: 120_000 }, async () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ LOG_LEVEL: "verbose" }, /LOG_LEVEL: expected one of fatal, error, warn, info, debug, trace, silent, got "verbose"/],
      [{ SIM_CAPTURES: "foo" }, /SIM_CAPTURES: expected one of immediate, requested, got "foo"/],
      [{ WEBHOOK_ALLOW_PRIVATE: "2" }, /WEBHOOK_ALLOW_PRIVATE: expected on or off \(on: on, 1, true, yes; off: off, 0, false, no\), got "2"/],
      [{ WEBHOOK_TIMEOUT_MS: "0" }, /WEBHOOK_TIMEOUT_MS: expected whole milliseconds from 1 to 2147483647/],
      [{ DATABASE_URL: "mysql://x" }, /DATABASE_URL: expected a postgres:\/\/ URL/],
      // a database that cannot be reached, once the wait for it is over (STORE_START_WAIT_SECONDS; 0: at once)
      [{ DATABASE_URL: "postgres://u:p@127.0.0.1:1/db", STORE_START_WAIT_SECONDS: "0" }, /cannot be reached/],
      // a host that is no address of this host: named as HOST (METRICS_HOST for the metrics listener), not only the system's words
      [{ HOST: "not_a_host.invalid" }, /HOST: cannot listen on "not_a_host\.invalid" \(getaddrinfo \w+ not_a_host\.invalid\); give an address of this host/],
      [{ HOST: "192.0.2.1" }, /HOST: cannot listen on "192\.0\.2\.1" \(listen EADDRNOTAVAIL/],
      [{ METRICS_PORT: String(await freePort()), METRICS_HOST: "not_a_host.invalid" }, /METRICS_HOST: cannot listen on "not_a_host\.invalid"/],
      // a number the store's library would refuse in its own words
      [{ SQLITE_BUSY_TIMEOUT_MS: "1.5" }, /SQLITE_BUSY_TIMEOUT_MS: expected a whole number of milliseconds from 0 to 2147483647, got "1\.5"/],
      [{ SQLITE_BUSY_TIMEOUT_MS: "99999999999" }, /SQLITE_BUSY_TIMEOUT_MS: expected a whole number of milliseconds from 0 to 2147483647, got "99999999999"/],
      // an adapters module whose createProcessors throws: the variable, the module, the error's message
      [{ SANDBOX: "off", PROCESSORS_MODULE: "test/fixtures/processors/throws.mjs" }, /PROCESSORS_MODULE: createProcessors of test\/fixtures\/processors\/throws\.mjs failed \(boom in adapter\)/],
      [{ CARDFLOW_STORE: "bogus" }, /CARDFLOW_STORE: unknown store "bogus"; use sqlite:PATH, postgres:URL or memory/],
      // a time that keeps no answer: the same Idempotency-Key would act twice
      [{ IDEMPOTENCY_TTL_HOURS: "0" }, /IDEMPOTENCY_TTL_HOURS: expected from 1 to 8760 hours/],
      // how the process is operated (src/serve/config.ts): the same form, not a line of their own
      [{ SHUTDOWN_DEADLINE_MS: "1000" }, /SHUTDOWN_DEADLINE_MS: 1000 leaves no time to stop after the grace/],
      [{ SHUTDOWN_GRACE_MS: "abc" }, /SHUTDOWN_GRACE_MS: expected a whole number/],
      [{ READY_MAX_LAG_SECONDS: "-5" }, /READY_MAX_LAG_SECONDS: expected a whole number/],
      [{ PORT: "18080", METRICS_PORT: "18080" }, /METRICS_PORT: 18080 is the API's port/],
    ];
    for (const [env, said] of cases) {
      const { code, stderr } = await refusedStart(env);
      expect(code, JSON.stringify(env)).toBe(1);
      expect(stderr, JSON.stringify(env)).toMatch(new RegExp(`^cardflow: refusing to start: .*${said.source}`));
      expect(stderr.trim().split("\n"), JSON.stringify(env)).toHaveLength(1);
      expect(stderr, JSON.stringify(env)).not.toMatch(/secret|s3c/);
    }
  });
});

describe("a store that cannot be opened stops the start naming it (the variable, the URL with its password masked, the file at fault)", () => {
  it("PostgreSQL and SQLite: one line and exit 1", { timeout: 120_000 }, async () => {
    const cases: [Record<string, string>, RegExp][] = [
      // the value as it was set, its password masked
      [{ DATABASE_URL: "mysql://x:secret@127.0.0.1/x" }, /DATABASE_URL: expected a postgres:\/\/ URL, got "mysql:\/\/x:\*\*\*@127\.0\.0\.1\/x"\n/],
      // a database that cannot be reached, once the wait for it is over (STORE_START_WAIT_SECONDS; 0: at once): the variable and its URL named
      [{ DATABASE_URL: "postgres://u:p@127.0.0.1:1/db", STORE_START_WAIT_SECONDS: "0" }, /DATABASE_URL: PostgreSQL postgres:\/\/u:\*\*\*@127\.0\.0\.1:1\/db cannot be reached \(connect ECONNREFUSED 127\.0\.0\.1:1\)\n/],
      [{ DATABASE_URL: "postgres://u:p@127.0.0.1:1/db", STORE_START_WAIT_SECONDS: "1" }, /DATABASE_URL: PostgreSQL postgres:\/\/u:\*\*\*@127\.0\.0\.1:1\/db cannot be reached .*; waited 1 s for it \(STORE_START_WAIT_SECONDS\)\n/],
      // given as CARDFLOW_STORE (npm start's --store): that variable named, not DATABASE_URL
      [{ CARDFLOW_STORE: "postgres://u:p@127.0.0.1:1/db", STORE_START_WAIT_SECONDS: "0" }, /CARDFLOW_STORE: PostgreSQL postgres:\/\/u:\*\*\*@127\.0\.0\.1:1\/db cannot be reached/],
      // a password with an unencoded "/" is masked whole
      [{ DATABASE_URL: "postgres://u:s3c/ret@127.0.0.1:1/db", STORE_START_WAIT_SECONDS: "0" }, /DATABASE_URL: PostgreSQL postgres:\/\/u:\*\*\*@127\.0\.0\.1:1\/db cannot be/],
      // a wrong password: the variable named, not only PostgreSQL's words
      [{ DATABASE_URL: wrongPassword(), STORE_START_WAIT_SECONDS: "0" }, /DATABASE_URL: PostgreSQL postgres:\/\/\w+:\*\*\*@\S+ refused the login \(password authentication failed for user "\w+"\)\n/],
      // a schema name cardflow does not take: the variable and the rule
      [{ DATABASE_URL: "postgres://u:p@127.0.0.1:1/db", DATABASE_SCHEMA: "bad-schema" }, /DATABASE_SCHEMA: expected a schema name of lower-case letters, digits and _, .*got "bad-schema"\n/],
      // PostgreSQL's own prefix (CREATE SCHEMA refuses it): the variable named, not the URL
      [{ DATABASE_URL: "postgres://u:p@127.0.0.1:1/db", DATABASE_SCHEMA: "pg_x" }, /DATABASE_SCHEMA: expected a schema name of .*but not pg_.*got "pg_x"\n/],
      // a store file that is not one: the file at fault, and what it is
      [{ DATA_DIR: await garbageDir("cardflow.sqlite") }, /\/cardflow\.sqlite \(the event store\) is not a SQLite database \(file is not a database\)\n/],
      [{ DATA_DIR: await garbageDir("cardflow.read-models.sqlite") }, /\/cardflow\.read-models\.sqlite \(the read models' file\) is not a SQLite database \(file is not a database\)\n/],
    ];
    for (const [env, said] of cases) {
      const { code, stderr } = await refusedStart(env);
      expect(code, JSON.stringify(env)).toBe(1);
      expect(stderr, JSON.stringify(env)).toMatch(new RegExp(`^cardflow: refusing to start: .*${said.source}`));
      expect(stderr.trim().split("\n"), JSON.stringify(env)).toHaveLength(1);
    }
  });
});

describe("a SQLite store another process keeps locked through the start's wait", () => {
  it("stops the start naming the file and the wait (not SQLite's words alone)", { timeout: 60_000 }, async () => {
    const data = mkdtempSync(join(dir, "locked-"));
    const { events, readModels } = createSqliteStore({ path: join(data, "cardflow.sqlite") });
    await Promise.all([events.close(), readModels.close()]);
    const holder = new Database(join(data, "cardflow.sqlite"));
    holder.exec("BEGIN IMMEDIATE");
    try {
      const { code, stderr } = await refusedStart({ DATA_DIR: data });
      expect(code).toBe(1);
      expect(stderr).toMatch(/^cardflow: refusing to start: \/\S+\/cardflow\.sqlite \(the event store\) is locked by another process \(database is locked\), still after 5 s of waiting for its write lock\n$/);
    } finally {
      holder.exec("ROLLBACK");
      holder.close();
    }
  });
});

describe("the example HTTP adapter refuses at start the settings it cannot work with", () => {
  it("a timeout or poll interval that is not whole milliseconds, an http: URL or a private address the allowlist does not allow: exit 1, naming the variable", { timeout: 60_000 }, async () => {
    const adapters = { SANDBOX: "off", PROCESSORS_MODULE: EXAMPLE_ADAPTERS, PROCESSOR_A_URL: "https://processor-a.example", PROCESSOR_A_API_KEY: "k", PROCESSOR_B_URL: "https://processor-b.example", PROCESSOR_B_API_KEY: "k" };
    const cases: [Record<string, string>, string][] = [
      [{ PROCESSOR_TIMEOUT_MS: "20s" }, 'PROCESSOR_TIMEOUT_MS: expected a whole number of milliseconds from 1 to 2147483647, got "20s"'],
      [{ PROCESSOR_POLL_MS: "abc" }, 'PROCESSOR_POLL_MS: expected a whole number of milliseconds from 1 to 2147483647, got "abc"'],
      [{ PROCESSOR_A_URL: "http://processor-a.example" }, "PROCESSOR_A_URL: http: URLs are not requested outside the sandbox: https only"],
      // production: only the allowlist can allow it (WEBHOOK_ALLOW_PRIVATE is the sandbox's, and refused here)
      [{ PROCESSOR_B_URL: "https://10.1.2.3/api" }, "PROCESSOR_B_URL: 10.1.2.3 is a special-purpose address (private-use); only the operator's OUTBOUND_ALLOWLIST allows it"],
      // a name of this host, as a webhook's registration refuses it: allowed only with both loopback addresses in OUTBOUND_ALLOWLIST
      [{ PROCESSOR_A_URL: "https://localhost/api" }, "PROCESSOR_A_URL: localhost names this host (loopback: 127.0.0.1 and ::1)"],
      // no host right after https:// (WHATWG parsing would take it as https://api/)
      [{ PROCESSOR_B_URL: "https:///api" }, 'PROCESSOR_B_URL: no host right after https:// (as in https://host/path), got "https:///api"'],
      [{ PROCESSOR_B_URL: "https://localhost./api", OUTBOUND_ALLOWLIST: "127.0.0.1" }, "PROCESSOR_B_URL: localhost. names this host (loopback: 127.0.0.1 and ::1); a name is requested only when every address it stands for is allowed: allow both in OUTBOUND_ALLOWLIST; ::1 is not allowed\n"],
    ];
    for (const [env, said] of cases) {
      const { code, stderr, dataDir } = await refusedStart({ ...adapters, ...env });
      expect(code, JSON.stringify(env)).toBe(1);
      expect(stderr, JSON.stringify(env)).toMatch(/^cardflow: refusing to start: /);
      expect(stderr, JSON.stringify(env)).toContain(said);
      // before any store is made (the module's checkSettings): nothing written
      expect(readdirSync(dataDir), JSON.stringify(env)).toEqual([]);
    }
  });
});

describe("the module's checkSettings runs once per start", () => {
  it("npm start and serve --store alike (serve --store ran it before opening its store, then the service again)", { timeout: 60_000 }, async () => {
    const module = join(ROOT, "test/fixtures/processors/checked-once.mjs");
    const started = await refusedStart({ SANDBOX: "off", PROCESSORS_MODULE: module });
    expect(started.stderr).toContain("created after one check");
    const dataDir = mkdtempSync(join(dir, "checked-once-"));
    const child = spawn(process.execPath, ["bin/cardflow.js", "serve", "--store", `sqlite:${join(dataDir, "other.sqlite")}`], {
      cwd: ROOT,
      env: { ...process.env, SANDBOX: "off", NODE_ENV: "", PROCESSORS_MODULE: module, PORT: "0", HOST: "127.0.0.1", METRICS_PORT: "0", DATA_DIR: dataDir },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    expect(await new Promise<number | null>((resolve) => child.on("exit", resolve))).toBe(1);
    expect(stderr).toContain("created after one check");
    expect(stderr).not.toContain("times in one start");
  });
});

describe("the example HTTP adapter's checkSettings (run before any store is opened)", () => {
  it("refuses a processor named by a host name that resolves to a refused address, as a webhook's registration does", async () => {
    const resolving = (address: string) => createOutbound({ sandbox: false, allowPrivate: false, allowlist: [], resolve: async () => [{ address, family: 4 }] });
    const env = { PROCESSOR_A_URL: "https://processor-a.internal/api", PROCESSOR_A_API_KEY: "k", PROCESSOR_B_URL: "https://processor-b.example/api", PROCESSOR_B_API_KEY: "k" };
    await expect(checkSettings({ env, outbound: resolving("127.0.0.1") })).rejects.toThrow(/^PROCESSOR_A_URL: processor-a\.internal resolves to 127\.0\.0\.1 .*loopback/);
    await expect(checkSettings({ env, outbound: resolving("10.0.0.7") })).rejects.toThrow(/^PROCESSOR_A_URL: processor-a\.internal resolves to 10\.0\.0\.7 .*private-use/);
    await expect(checkSettings({ env, outbound: resolving("93.184.215.14") })).resolves.toBeUndefined();
  });
});

describe("production mode with the example HTTP adapter and an HTTPS processor", () => {
  let processor: Awaited<ReturnType<typeof startHttpsProcessor>>;
  let server: ServerProcess;
  const store = { DATA_DIR: mkdtempSync(join(dir, "store-")) };
  const keys: Record<"A" | "B", string> = { A: "", B: "" };
  let env: Record<string, string>;

  beforeAll(async () => {
    processor = await startHttpsProcessor();
    const { store: events, readModels } = await openStores(configFromEnv({ DATA_DIR: store.DATA_DIR, DATABASE_URL: "" }));
    const engine = createEngine({ store: events, readModels });
    await engine.openAccount({ external_account_id: "acct_a", processor: "A" });
    await engine.openAccount({ external_account_id: "acct_b", processor: "B" });
    keys.A = (await createApiKeys(engine).issue("acct_a")).key;
    keys.B = (await createApiKeys(engine).issue("acct_b")).key;
    await engine.close();
    env = {
      NODE_ENV: "production",
      SANDBOX: "",
      WEBHOOK_ALLOW_PRIVATE: "",
      PROCESSORS_MODULE: EXAMPLE_ADAPTERS,
      PROCESSOR_A_URL: processor.url,
      PROCESSOR_A_API_KEY: PROCESSOR_API_KEY,
      PROCESSOR_B_URL: processor.url,
      PROCESSOR_B_API_KEY: PROCESSOR_API_KEY,
      PROCESSOR_POLL_MS: "100",
      OUTBOUND_ALLOWLIST: "127.0.0.1",
      OUTBOUND_CA_FILE: TEST_CA_FILE,
    };
    server = await startServer(store, env);
  }, 90_000);
  afterAll(async () => {
    expect(await server?.stop()).toBe(0);
    await processor?.close();
  });

  const post = (account: "A" | "B", path: string, body: object) => client(keys[account]).post(server.url, path, body);
  const read = async (account: "A" | "B", paymentId: string) =>
    (await fetch(`${server.url}/v2/payment/intent/${paymentId}?external_account_id=acct_${account.toLowerCase()}`, { headers: { authorization: `Bearer ${keys[account]}` } })).json();
  const charge = (token: string) => ({ external_account_id: "acct_a", amount: "50.00", payment_method_types: "card", capture_method: "manual", payment_method_id: token, external_customer_id: "cus_1" });

  it("says it runs in production and serves no simulator: no /sim, no sandbox card token", async () => {
    const started = `mode: production (adapters: ${EXAMPLE_ADAPTERS})`;
    expect(await server.outputContaining(started)).toContain(started);
    expect((await post("A", "/sim/terminal/present-card", { external_account_id: "acct_a", terminal_id: "tmr_1" })).status).toBe(404);
    const sandboxToken = await post("A", "/v2/payment/intent", charge("pm_card_visa"));
    expect(sandboxToken.body).toMatchObject({ status: 404, code: "resource_missing", param: "payment_method_id" });
  });

  it("charges a card on file through the processor over https, with the attempt id as its Idempotency-Key", async () => {
    const intent = await post("A", "/v2/payment/intent", charge("pm_card_ok"));
    expect(intent.status).toBe(200);
    const auth = await post("A", "/v2/payment/auth", { external_account_id: "acct_a", payment_id: intent.body.payment_id });
    expect(auth.body).toMatchObject({ status: "requires_capture", amount_authorized: "50.00" });
    const capture = await post("A", "/v2/payment/capture", { external_account_id: "acct_a", payment_id: intent.body.payment_id, amount: "50.00" });
    expect(capture.body).toMatchObject({ status: "succeeded", amount_captured: "50.00" });
    const made = processor.calls.filter((c) => c.body.payment?.payment_id === intent.body.payment_id);
    expect(made.map((c) => c.path)).toEqual(["/v1/charge", "/v1/capture"]);
    for (const call of made) expect(call.key).toMatch(/\S/);
  });

  it("a declined answer is never succeeded, nor is an answer that is not a well-formed outcome", async () => {
    const declined = await post("A", "/v2/payment/intent", { ...charge("pm_declined"), capture_method: "automatic" });
    const answer = await post("A", "/v2/payment/auth", { external_account_id: "acct_a", payment_id: declined.body.payment_id });
    expect(answer.body.status).not.toBe("succeeded");
    const record = await read("A", declined.body.payment_id);
    expect(record).toMatchObject({ last_error_code: "ONLINE_DECLINED", amount_captured: "0.00" });
    expect(["requires_payment_method", "error"]).toContain(record.status);

    const garbled = await post("A", "/v2/payment/intent", { ...charge("pm_garbled"), capture_method: "automatic" });
    const garbledAuth = await post("A", "/v2/payment/auth", { external_account_id: "acct_a", payment_id: garbled.body.payment_id });
    expect(garbledAuth.body.status).not.toBe("succeeded");
    const garbledRecord = await read("A", garbled.body.payment_id);
    expect(garbledRecord.status).not.toBe("succeeded");
    expect(garbledRecord.amount_captured).toBe("0.00");
  });

  it("processor B's client SDK routes are served by the adapter: the card read and authorized by the processor", async () => {
    const reader = await post("B", "/v2/hardware", { external_account_id: "acct_b", terminal_type: "B_reader" });
    const intent = await post("B", "/v2/payment/intent", { external_account_id: "acct_b", amount: "12.00", payment_method_types: "card_present", capture_method: "manual" });
    const sdk = (path: string, body: object) => fetch(`${server.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }).then(async (r) => ({ status: r.status, body: await r.json() }));
    const collected = await sdk("/v2/sdk/payment-method", { client_secret: intent.body.client_secret, terminal_id: reader.body.terminal_id, card_number: "5555555555554444" });
    expect(collected).toMatchObject({ status: 200, body: { status: "payment_method_requested" } });
    const processed = await sdk("/v2/sdk/process-payment", { client_secret: intent.body.client_secret });
    expect(processed).toMatchObject({ status: 200, body: { status: "requires_capture" } });
    expect(processor.calls.filter((c) => c.body.payment?.payment_id === intent.body.payment_id).map((c) => c.path)).toEqual(["/v1/cards/read", "/v1/authorize"]);
    expect((await read("B", intent.body.payment_id)).payment).toMatchObject({ last_4: "4444" });

    // a card the processor declines, read through the SDK, is not authorized
    const declined = await post("B", "/v2/payment/intent", { external_account_id: "acct_b", amount: "12.00", payment_method_types: "card_present", capture_method: "manual" });
    await sdk("/v2/sdk/payment-method", { client_secret: declined.body.client_secret, terminal_id: reader.body.terminal_id, card_number: "4000000000000002" });
    await sdk("/v2/sdk/process-payment", { client_secret: declined.body.client_secret });
    expect(await read("B", declined.body.payment_id)).toMatchObject({ last_error_code: "ONLINE_DECLINED", amount_authorized: "0.00" });
  });

  it("a terminal's outcome reported later by the processor arrives through connect(report)", async () => {
    const terminal = await post("A", "/v2/hardware", { external_account_id: "acct_a", terminal_type: "A_async" });
    const intent = await post("A", "/v2/payment/intent", { external_account_id: "acct_a", amount: "8.00", payment_method_types: "card_present", capture_method: "manual" });
    const auth = await post("A", "/v2/payment/auth", { external_account_id: "acct_a", payment_id: intent.body.payment_id, terminal_id: terminal.body.terminal_id });
    expect(auth.body.status).toBe("payment_method_requested");
    processor.presentCard(intent.body.payment_id, "8.00");
    let record: any;
    for (let waited = 0; waited < 10_000; waited += 100) {
      record = await read("A", intent.body.payment_id);
      if (record.status !== "payment_method_requested") break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(record).toMatchObject({ status: "requires_capture", amount_authorized: "8.00" });
  });

  it("late outcomes the processor does not give are said in the JSON log on stdout, once, and once it gives them again; never on stderr", { timeout: 60_000 }, async () => {
    const watched = await startServer(store, { ...env, LOG_LEVEL: "info" });
    let stderr = "";
    watched.child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
    const said = () => watched.output().split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l)).filter((l) => l.processor);
    try {
      processor.feed.down = true;
      await new Promise((r) => setTimeout(r, 1_500)); // polled every 100 ms: about 15 failures each
      processor.feed.down = false;
      await expect.poll(() => said().length, { timeout: 10_000 }).toBe(4);
      await new Promise((r) => setTimeout(r, 500)); // nothing more once it answers
      for (const p of ["A", "B"]) {
        expect(said().filter((l) => l.processor === p).map((l) => [l.level, l.msg])).toEqual([
          [40, expect.stringMatching(new RegExp(`^processor ${p}: late outcomes not read \\(asked again every 100 ms\\): processor GET /v1/events\\S*: HTTP 500`))],
          [30, `processor ${p}: late outcomes read again`],
        ]);
      }
      expect(stderr).not.toContain("late outcomes");
    } finally {
      processor.feed.down = false;
      expect(await watched.stop()).toBe(0);
    }
  });

  /** `cardflow reconcile --grace 0 --json` on this store, in the environment given. */
  async function reconcile(cliEnv: Record<string, string>): Promise<{ code: unknown; out: string; err: string }> {
    const cli = spawn(process.execPath, [join(ROOT, "bin/cardflow.js"), "reconcile", "--grace", "0", "--json"], { cwd: ROOT, env: { ...process.env, ...cliEnv, DATA_DIR: store.DATA_DIR }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    cli.stdout.on("data", (d) => (out += d));
    cli.stderr.on("data", (d) => (err += d));
    return { code: await new Promise((resolve) => cli.on("exit", resolve)), out, err };
  }

  it("cardflow reconcile asks the configured adapters: a charge whose answer was lost is resolved from the processor's record; in the sandbox it refuses this store", { timeout: 90_000 }, async () => {
    const intent = await post("A", "/v2/payment/intent", charge("pm_card_ok"));
    processor.failAfterActing.add(intent.body.payment_id);
    const auth = await post("A", "/v2/payment/auth", { external_account_id: "acct_a", payment_id: intent.body.payment_id });
    expect(auth.body.status).not.toBe("requires_capture");
    processor.failAfterActing.delete(intent.body.payment_id);

    // without the production settings, the simulators' ledger would answer "never received" for the
    // real call and let a retry charge again: a sandbox process refuses a store production served
    const sandbox = { NODE_ENV: "", SANDBOX: "", PROCESSORS_MODULE: "", WEBHOOK_ALLOW_PRIVATE: "" };
    const refused = await reconcile(sandbox);
    expect(refused.code).toBe(2);
    expect(refused.err).toContain("cardflow: this store holds production payments");
    expect(refused.out).toBe("");
    const serve = await refusedStart({ ...sandbox, DATA_DIR: store.DATA_DIR });
    expect(serve.code).toBe(1);
    expect(serve.stderr).toMatch(/^cardflow: refusing to start: this store holds production payments \(\d+ production process(es)? served it\)/);
    expect(existsSync(join(store.DATA_DIR, "simulators.sqlite"))).toBe(false);

    const { code, out, err } = await reconcile(env);
    expect(code, err).toBe(0);
    const report = JSON.parse(out);
    expect(report.resolved).toEqual(expect.arrayContaining([expect.objectContaining({ payment_id: intent.body.payment_id, appended: expect.arrayContaining(["PaymentAuthorized"]) })]));
    expect(processor.calls.filter((c) => c.body.payment?.payment_id === intent.body.payment_id).map((c) => c.path)).toEqual(["/v1/charge"]);
    expect((await read("A", intent.body.payment_id)).status).toBe("requires_capture");
  });

  it("a refund slower than the reconciler's grace, retried through another process after it was abandoned: one refund at the processor", { timeout: 90_000 }, async () => {
    // `calling` gives up on a call after 1 s; `reconciling` asks about an open call 2 s after it was opened
    const calling = await startServer(store, { ...env, PROCESSOR_TIMEOUT_MS: "1000", RECONCILE_GRACE_MS: "600000" });
    const reconciling = await startServer(store, { ...env, RECONCILE_GRACE_MS: "2000", RECONCILE_INTERVAL_MS: "250" });
    try {
      const http = client(keys.A);
      const intent = await http.post(calling.url, "/v2/payment/intent", { ...charge("pm_card_ok"), capture_method: "automatic" });
      const payment_id = intent.body.payment_id;
      expect((await http.post(calling.url, "/v2/payment/auth", { external_account_id: "acct_a", payment_id })).body.status).toBe("succeeded");
      const refund = { external_account_id: "acct_a", payment_id, amount: "20.00" };
      const stream = async () => (await storedEvents(store)).filter((e) => e.stream === `payment-${payment_id}`);

      // the refund's call reaches the processor 8 s late: the caller gives up (503), the other process's
      // reconciler hears "never received" and abandons it, and the client retries through that process
      const landed = processor.holdNext(payment_id, 8_000);
      const first = await http.post(calling.url, "/v2/payment/refund", refund, { "idempotency-key": "slow-refund" });
      expect(first.status).toBe(503);
      for (let i = 0; i < 200 && !(await stream()).some((e) => e.type === "AttemptAbandoned"); i++) await new Promise((r) => setTimeout(r, 50));
      const retry = await http.post(reconciling.url, "/v2/payment/refund", refund, { "idempotency-key": "slow-refund" });
      expect(retry.status, JSON.stringify(retry.body)).toBe(200);
      expect(retry.body).toMatchObject({ status: "succeeded", amount_refunded: "20.00" });
      await landed; // the first call acts now, under the same key as the retry's
      await new Promise((r) => setTimeout(r, 1_000)); // the reconciler's passes and second look after it

      const refunds = processor.calls.filter((c) => c.path === "/v1/refund" && c.body.payment.payment_id === payment_id);
      expect(refunds).toHaveLength(2);
      // the processor refunded once: the retry made the same call, under the same key
      expect(processor.acted.filter((a) => a.path === "/v1/refund" && refunds.some((r) => r.key === a.key))).toHaveLength(1);
      expect(refunds[1]!.key).toBe(refunds[0]!.key);
      const events = await stream();
      expect(events.slice(-4).map((e) => [e.type, (e.data as { attempt_id?: string }).attempt_id ?? null])).toEqual([
        ["RefundAttempted", refunds[0]!.key],
        ["AttemptAbandoned", refunds[0]!.key],
        ["RefundAttempted", refunds[0]!.key],
        ["PaymentRefunded", refunds[0]!.key],
      ]);
      expect((await read("A", payment_id)).amount_refunded).toBe("20.00");
    } finally {
      await Promise.all([calling.stop(), reconciling.stop()]);
    }
  });
});
