// The CLI's store: every command that reads one says which (stderr) and takes --store or the
// service's own (DATABASE_URL, else DATA_DIR) alike; `reconcile` refuses a store that is not there
// like the others; `accounts` takes --store too; a refused import into a new SQLite store or
// PostgreSQL schema leaves nothing behind; a PostgreSQL schema that does not exist is refused like a missing file.
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/index.js";
import { createEngine } from "../../src/engine.js";
import { createPostgresStore } from "../../src/store/postgres/index.js";
import { createSqliteStore } from "../../src/store/sqlite/index.js";
import { freshSchema } from "../multiprocess/servers.js";
import { testDatabase } from "../support/postgres.js";

const run = promisify(execFile);
const BIN = new URL("../../bin/cardflow.js", import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), "cardflow-cli-store-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function cardflow(...args: string[]) {
  const io = { out: "", err: "" };
  const code = await runCli(args, { out: (t) => void (io.out += t), err: (t) => void (io.err += t), interactive: false });
  return { code, ...io };
}

/** A SQLite store with an account (one event) in it. */
async function sqliteStore(name: string): Promise<string> {
  const path = join(dir, name);
  const { events, readModels } = createSqliteStore({ path });
  const engine = createEngine({ store: events, readModels });
  await engine.openAccount({ external_account_id: "acct_cli" });
  await engine.close();
  return path;
}

describe("cardflow reconcile's store", () => {
  it("refuses a store that is not there (nothing created), names the one it opened, takes --store", async () => {
    const missing = join(dir, "nowhere", "cardflow.sqlite");
    const refused = await cardflow("reconcile", "--store", `sqlite:${missing}`);
    expect(refused.code).toBe(2);
    expect(refused.err).toBe(`cardflow: --store: no SQLite store at ${missing}; nothing was created (check the path)\n`);
    const empty = mkdtempSync(join(dir, "empty-"));
    const byDir = await cardflow("reconcile", "--data-dir", empty);
    expect(byDir.code).toBe(2);
    expect(byDir.err).toMatch(/^cardflow: no store at .*cardflow\.sqlite .*nothing was created.*or give --store\n$/);
    expect(byDir.err).toContain(`(--data-dir ${empty})`); // it said DATA_DIR of the option's directory
    expect(existsSync(join(dir, "nowhere"))).toBe(false);
    expect(readdirSync(empty)).toEqual([]);
    // an empty file is no store either (SQLite would make it a new, empty one, and the audit call it clean)
    const blank = mkdtempSync(join(dir, "blank-"));
    writeFileSync(join(blank, "cardflow.sqlite"), "");
    expect(await cardflow("reconcile", "--data-dir", blank)).toMatchObject({ code: 2, err: expect.stringMatching(/no store at .*cardflow\.sqlite .*the file is empty.*nothing was created/) });
    expect(await cardflow("replay", "--store", `sqlite:${join(blank, "cardflow.sqlite")}`)).toMatchObject({ code: 2, err: expect.stringContaining("(the file is empty); nothing was created") });
    expect([readdirSync(blank), readFileSync(join(blank, "cardflow.sqlite"), "utf8")]).toEqual([["cardflow.sqlite"], ""]);
    // another program's SQLite database is no store (cardflow's tables were added to it, and the audit called it clean)
    const foreignDir = mkdtempSync(join(dir, "foreign-"));
    const foreign = join(foreignDir, "other.sqlite");
    new Database(foreign).exec("CREATE TABLE foo (x)").close();
    const before = readFileSync(foreign);
    expect(await cardflow("audit", "--all", "--store", `sqlite:${foreign}`)).toMatchObject({ code: 2, err: expect.stringContaining("(the file is a SQLite database without cardflow's events: another program's?); nothing was created") });
    expect([readdirSync(foreignDir), readFileSync(foreign).equals(before)]).toEqual([["other.sqlite"], true]);
    // postgres: with another database's URL, or a path, is refused as DATABASE_URL's is (it was tried as PostgreSQL)
    expect(await cardflow("replay", "--store", "postgres:mysql://u:pw@h/db")).toMatchObject({ code: 2, err: 'cardflow: --store: postgres:URL needs a postgres:// URL, got "mysql://u:***@h/db"\n' });
    // an empty store option (`--store "$UNSET"`) names no store: refused, not the default store in its place
    for (const args of [["audit", "--all", "--store", ""], ["serve", "--store", ""]]) {
      expect(await cardflow(...args)).toEqual({ code: 2, out: "", err: "cardflow: --store: is empty: it names no store (sqlite:PATH, postgres:URL, …)\n" });
    }
    for (const args of [["reconcile", "--data-dir", ""], ["accounts", "create", "acct_blank", "--data-dir", " "]]) {
      expect(await cardflow(...args)).toEqual({ code: 2, out: "", err: "cardflow: --data-dir: needs a directory\n" });
    }

    const path = await sqliteStore("reconcile.sqlite");
    // the sandbox processor's ledger the service keeps beside its store: missing, refused, nothing created
    // (an empty one made up here would answer "never received" for calls the processor made)
    const noLedger = await cardflow("reconcile", "--json", "--grace", "0", "--store", `sqlite:${path}`);
    expect(noLedger).toMatchObject({ code: 2, out: "" });
    // the refusal names where the directory came from: the store's folder, the option, the variable
    expect(noLedger.err).toContain(`cardflow: --store: no sandbox processor ledger at ${join(dir, "simulators.sqlite")}; nothing was created`);
    const elsewhere = mkdtempSync(join(dir, "ledgerless-"));
    expect((await cardflow("reconcile", "--grace", "0", "--store", `sqlite:${path}`, "--data-dir", elsewhere)).err).toContain(`cardflow: --data-dir: no sandbox processor ledger at ${join(elsewhere, "simulators.sqlite")};`);
    const savedDataDir = process.env.DATA_DIR;
    process.env.DATA_DIR = elsewhere;
    try {
      expect((await cardflow("reconcile", "--grace", "0", "--store", `sqlite:${path}`)).err).toContain(`cardflow: DATA_DIR: no sandbox processor ledger at ${join(elsewhere, "simulators.sqlite")};`);
    } finally {
      if (savedDataDir === undefined) delete process.env.DATA_DIR;
      else process.env.DATA_DIR = savedDataDir;
    }
    expect([existsSync(join(dir, "simulators.sqlite")), readdirSync(elsewhere)]).toEqual([false, []]);
    writeFileSync(join(dir, "simulators.sqlite"), ""); // the service's, as it leaves it (SQLite takes an empty file)
    const pass = await cardflow("reconcile", "--json", "--grace", "0", "--store", `sqlite:${path}`);
    expect(pass).toMatchObject({ code: 0, err: `cardflow: store: SQLite ${path}\n` });
    expect(JSON.parse(pass.out)).toMatchObject({ found: 0, resolved: [] });
    // a store file named cardflow.sqlite: its folder is the data directory, whatever DATA_DIR says, as
    // for serve, which keeps its ledger there (DATA_DIR's folder may hold another sandbox's ledger)
    mkdirSync(join(dir, "served"));
    const served = await sqliteStore(join("served", "cardflow.sqlite"));
    writeFileSync(join(dir, "served", "simulators.sqlite"), "");
    process.env.DATA_DIR = elsewhere;
    try {
      expect(await cardflow("reconcile", "--json", "--grace", "0", "--store", `sqlite:${served}`)).toMatchObject({ code: 0, err: `cardflow: store: SQLite ${served}\n` });
    } finally {
      if (savedDataDir === undefined) delete process.env.DATA_DIR;
      else process.env.DATA_DIR = savedDataDir;
    }
    expect(readdirSync(elsewhere)).toEqual([]);

    // a grace that is not a whole number of milliseconds from 0 (NaN would resolve nothing, -5 everything in flight)
    for (const grace of ["abc", "-5", "", "1.5", "1e3", "+5", "0x10", "5 s", "5y"]) {
      const bad = await cardflow("reconcile", "--grace", grace, "--store", `sqlite:${path}`);
      expect(bad, grace).toMatchObject({ code: 2, out: "" });
      expect(bad.err).toBe(`cardflow: --grace: expected milliseconds, a whole number from 0, or a duration (30s, 5m), got ${JSON.stringify(grace)}\n`);
    }
    // a duration as accounts rotate --grace takes it
    expect(await cardflow("reconcile", "--dry-run", "--grace", "30s", "--store", `sqlite:${path}`)).toMatchObject({ code: 0 });
    const exported = join(dir, "reconcile-export.jsonl");
    writeFileSync(exported, "");
    const readOnly = await cardflow("reconcile", "--store", `jsonl:${exported}`);
    expect(readOnly.code).toBe(2);
    expect(readOnly.err).toContain("an export is read-only");
  });

  it("reads DATABASE_URL as `npm start` does, and says so (a real process)", { timeout: 120_000 }, async () => {
    const url = await testDatabase();
    const schema = freshSchema();
    const made = await createPostgresStore({ connectionString: url, schema }); // the service made it
    await Promise.all([made.events.close(), made.readModels.close()]);
    const env = { ...process.env, DATABASE_URL: url, DATABASE_SCHEMA: schema, DATA_DIR: mkdtempSync(join(dir, "host-")), CARDFLOW_STORE: "" };
    writeFileSync(join(env.DATA_DIR, "simulators.sqlite"), ""); // the sandbox processor's ledger, as the service leaves it
    const { stdout, stderr } = await run(process.execPath, [BIN, "reconcile", "--json", "--grace", "0"], { env });
    // one form whichever names it: the URL, its password masked
    const line = `cardflow: store: PostgreSQL ${url.replace(/:[^:/@]*@/, ":***@")} (schema ${schema})\n`;
    expect(stderr).toBe(line);
    expect(JSON.parse(stdout)).toMatchObject({ found: 0 });
    // the same store by --store: the same words
    const byOption = await run(process.execPath, [BIN, "events", "heads", "--store", url], { env: { ...env, DATABASE_URL: "" } });
    expect(byOption.stderr).toBe(line);
  });
});

describe("a store that cannot be opened", () => {
  it("a SQLite file that is not one: the store line, then the file at fault and what it is (exit 2)", async () => {
    const garbage = mkdtempSync(join(dir, "garbage-"));
    writeFileSync(join(garbage, "cardflow.sqlite"), "hello world\n", { mode: 0o644 });
    const notADatabase = await cardflow("audit", "--all", "--no-progress", "--store", `sqlite:${join(garbage, "cardflow.sqlite")}`);
    expect(notADatabase).toEqual({ code: 2, out: "", err: `cardflow: store: SQLite ${join(garbage, "cardflow.sqlite")}\ncardflow: ${join(garbage, "cardflow.sqlite")} (the event store) is not a SQLite database (file is not a database)\n` });
    // another program's file keeps its mode (a store's own is made private)
    expect(statSync(join(garbage, "cardflow.sqlite")).mode & 0o777).toBe(0o644);
    // a good events' file beside a read models' file that is not one: the read models' file is named, not the events'
    const beside = await sqliteStore("beside.sqlite");
    writeFileSync(join(dir, "beside.read-models.sqlite"), "hello world\n");
    const readModels = await cardflow("audit", "--all", "--no-progress", "--store", `sqlite:${beside}`);
    expect(readModels).toEqual({ code: 2, out: "", err: `cardflow: store: SQLite ${beside}\ncardflow: ${join(dir, "beside.read-models.sqlite")} (the read models' file) is not a SQLite database (file is not a database)\n` });
    // the service's own (DATA_DIR), and a directory
    const saved = { ...process.env };
    Object.assign(process.env, { DATA_DIR: garbage, DATABASE_URL: "", CARDFLOW_STORE: "" });
    try {
      expect((await cardflow("replay")).err).toBe(`cardflow: store: SQLite ${join(garbage, "cardflow.sqlite")}\ncardflow: ${join(garbage, "cardflow.sqlite")} (the event store) is not a SQLite database (file is not a database)\n`);
    } finally {
      process.env = saved;
    }
    const directory = await cardflow("audit", "--all", "--no-progress", "--store", `sqlite:${garbage}`);
    expect(directory).toEqual({ code: 2, out: "", err: `cardflow: store: SQLite ${garbage}\ncardflow: ${garbage} (the event store) is a directory, not a SQLite file\n` });
    // a file where a new store's directory would be made: named, not a bare ENOTDIR or EEXIST
    const inTheWay = join(garbage, "cardflow.sqlite", "new.sqlite");
    expect(await cardflow("accounts", "create", "acct_x", "--store", `sqlite:${inTheWay}`)).toEqual({ code: 2, out: "", err: `cardflow: store: SQLite ${inTheWay}\ncardflow: ${inTheWay} (the event store) cannot be opened: a file is in the way of its directory (EEXIST)\n` });
    const deeper = join(garbage, "cardflow.sqlite", "sub", "new.sqlite");
    expect(await cardflow("accounts", "create", "acct_x", "--store", `sqlite:${deeper}`)).toEqual({ code: 2, out: "", err: `cardflow: store: SQLite ${deeper}\ncardflow: ${deeper} (the event store) cannot be opened: a file is in the way of its directory (ENOTDIR)\n` });
  });

  it("PostgreSQL that cannot be reached or has no such database: the store line in one form (the masked URL), then why, naming where the URL was given", { timeout: 60_000 }, async () => {
    const unreachable = "postgres://u:secret@127.0.0.1:1/db";
    const saved = { ...process.env };
    Object.assign(process.env, { DATABASE_URL: unreachable, DATABASE_SCHEMA: "", CARDFLOW_STORE: "" });
    try {
      expect(await cardflow("audit", "--all", "--no-progress")).toEqual({
        code: 2,
        out: "",
        err: "cardflow: store: PostgreSQL postgres://u:***@127.0.0.1:1/db (schema cardflow)\ncardflow: DATABASE_URL: PostgreSQL postgres://u:***@127.0.0.1:1/db cannot be reached (connect ECONNREFUSED 127.0.0.1:1)\n",
      });
    } finally {
      process.env = saved;
    }
    const noDatabase = new URL(await testDatabase());
    noDatabase.pathname = "/no_such_database";
    const shown = noDatabase.href.replace(/:[^:/@]*@/, ":***@");
    expect(await cardflow("replay", "--store", noDatabase.href)).toEqual({
      code: 2,
      out: "",
      err: `cardflow: store: PostgreSQL ${shown} (schema cardflow)\ncardflow: --store: PostgreSQL ${shown} cannot be opened (database "no_such_database" does not exist)\n`,
    });
  });

  it("KurrentDB that cannot be reached: asked at open, said naming it, its password masked", { timeout: 60_000 }, async () => {
    const url = "kurrentdb://admin:changeit@127.0.0.1:1?tls=false";
    const { code, err } = await cardflow("audit", "--all", "--no-progress", "--store", `kurrentdb:${url}`);
    const shown = "kurrentdb://admin:***@127.0.0.1:1?tls=false";
    expect([code, err.split("\n")[0], err.split("\n")[1]?.startsWith(`cardflow: --store: KurrentDB ${shown} cannot be reached (`)]).toEqual([2, `cardflow: store: KurrentDB ${shown}`, true]);
    expect(err).not.toContain("changeit");
  });
});

describe("cardflow accounts' store", () => {
  it("a usage error (a duration without its unit) creates no store: it is refused before one is opened", async () => {
    const empty = mkdtempSync(join(dir, "usage-"));
    for (const args of [["create", "acct_x", "--expires", "30"], ["key", "acct_x", "--expires", "0d"], ["rotate", "key_x", "--grace", "5"]]) {
      const refused = await cardflow("accounts", ...args, "--data-dir", empty);
      expect(refused, args.join(" ")).toMatchObject({ code: 2, out: "" });
      expect(readdirSync(empty), args.join(" ")).toEqual([]);
    }
  });

  it("takes --store (or CARDFLOW_STORE) like every command: a SQLite file of another name than cardflow.sqlite, a JSONL export refused", async () => {
    const other = join(dir, "accounts", "other.sqlite");
    const created = await cardflow("accounts", "create", "acct_other", "--store", `sqlite:${other}`);
    expect(created.code, created.err).toBe(0);
    expect(created.out).toMatch(/^sk_\S+\n$/);
    expect(created.err).toContain(`cardflow: store: SQLite ${other}`);
    expect(existsSync(join(dir, "accounts", "cardflow.sqlite"))).toBe(false);
    // a memory store: the key it prints dies with the command, which says so (a SQLite store's does not)
    expect(created.err).not.toContain("a memory store");
    const dry = await cardflow("accounts", "create", "acct_dry", "--store", "memory");
    expect([dry.code, dry.out]).toEqual([0, expect.stringMatching(/^sk_\S+\n$/)]);
    expect(dry.err).toContain("cardflow: a memory store ends with this command: nothing it writes (a key neither) can be used afterwards\n");

    process.env.CARDFLOW_STORE = `sqlite:${other}`;
    try {
      const keys = await cardflow("accounts", "keys", "acct_other", "--json");
      expect(keys.code, keys.err).toBe(0);
      expect(JSON.parse(keys.out)).toHaveLength(1);
    } finally {
      delete process.env.CARDFLOW_STORE;
    }
    // the key opens the account on that store
    const { events, readModels } = createSqliteStore({ path: other });
    const engine = createEngine({ store: events, readModels });
    expect((await engine.getAccount("acct_other")).external_account_id).toBe("acct_other");
    // its events' request ids from the store's counter, as the server's (not random 16-digit ones)
    const all = await events.readAll();
    expect(all.length).toBeGreaterThan(0);
    for (const event of all) expect(event.metadata.request_id, event.type).toBeLessThan(1_000_000);
    await engine.close();

    const exported = join(dir, "accounts", "export.jsonl");
    writeFileSync(exported, "");
    const refused = await cardflow("accounts", "create", "acct_x", "--store", `jsonl:${exported}`);
    expect(refused.code).toBe(2);
    expect(refused.err).toContain("cannot hold accounts and keys");
  });
});

describe("cardflow events import", () => {
  it("refused, into a new SQLite store, leaves nothing behind: no file, no directory", async () => {
    const bad = join(dir, "bad.jsonl");
    writeFileSync(bad, '{"not":"an event"}\n');
    const target = join(dir, "made", "for", "import", "cardflow.sqlite");
    const refused = await cardflow("events", "import", bad, "--store", `sqlite:${target}`);
    expect(refused.code).toBe(2);
    expect(refused.err).toContain(`cardflow: the store SQLite ${target} was new: nothing the command made of it is left\n`);
    expect(existsSync(join(dir, "made"))).toBe(false);

    // beside other files in an existing directory: only the store's own files go
    const shared = mkdtempSync(join(dir, "shared-"));
    writeFileSync(join(shared, "keep.txt"), "mine");
    expect((await cardflow("events", "import", bad, "--store", `sqlite:${join(shared, "cardflow.sqlite")}`)).code).toBe(2);
    expect(readdirSync(shared)).toEqual(["keep.txt"]);

    // an existing store is kept as it was
    const existing = await sqliteStore("existing.sqlite");
    expect((await cardflow("events", "import", bad, "--store", `sqlite:${existing}`)).code).toBe(2);
    const heads = await cardflow("events", "heads", "--store", `sqlite:${existing}`);
    expect(Object.keys(JSON.parse(heads.out))).toHaveLength(1);

    // an empty file counts as no store: put back as it was (empty, its mode), nothing beside it
    const blank = mkdtempSync(join(dir, "blank-"));
    writeFileSync(join(blank, "cardflow.sqlite"), "", { mode: 0o644 });
    expect((await cardflow("events", "import", bad, "--store", `sqlite:${join(blank, "cardflow.sqlite")}`)).code).toBe(2);
    expect(readdirSync(blank)).toEqual(["cardflow.sqlite"]);
    expect([statSync(join(blank, "cardflow.sqlite")).size, statSync(join(blank, "cardflow.sqlite")).mode & 0o777]).toEqual([0, 0o644]);

    // another program's database is not made a store: nothing written to it, nothing beside it
    const foreignDir = mkdtempSync(join(dir, "foreign-"));
    const foreign = join(foreignDir, "app.sqlite");
    const db = new Database(foreign);
    db.exec("CREATE TABLE customers (name TEXT); INSERT INTO customers VALUES ('alice')");
    db.close();
    const before = readFileSync(foreign);
    const intoForeign = await cardflow("events", "import", bad, "--store", `sqlite:${foreign}`);
    expect(intoForeign.code).toBe(2);
    expect(intoForeign.err).toContain(`${foreign} is a SQLite database without cardflow's events (another program's?): nothing was written to it`);
    expect(readFileSync(foreign).equals(before)).toBe(true);
    expect(readdirSync(foreignDir)).toEqual(["app.sqlite"]);
  });

  it("refuses a file with no events (no new store left behind), and a missing one before any store is touched", async () => {
    const empty = join(dir, "empty.jsonl");
    writeFileSync(empty, "\n");
    const target = join(dir, "made-empty", "cardflow.sqlite");
    const refused = await cardflow("events", "import", empty, "--store", `sqlite:${target}`);
    expect(refused).toMatchObject({ code: 2, out: "" });
    expect(refused.err).toContain(`cardflow: ${empty} holds no events: nothing imported\n`);
    expect(existsSync(join(dir, "made-empty"))).toBe(false);

    const missing = join(dir, "no-such.jsonl");
    expect(await cardflow("events", "import", missing, "--store", `sqlite:${target}`)).toEqual({ code: 2, out: "", err: `cardflow: ${missing} does not exist\n` });
    expect(await cardflow("events", "import", dir, "--store", `sqlite:${target}`)).toEqual({ code: 2, out: "", err: `cardflow: ${dir} is a directory, not a file\n` });
    expect(existsSync(join(dir, "made-empty"))).toBe(false);
  });
});

describe("a PostgreSQL schema that does not exist", () => {
  const schemaExists = async (url: string, schema: string) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [schema])).rowCount === 1;
    } finally {
      await client.end();
    }
  };
  /** Runs with DATABASE_SCHEMA (and DATABASE_URL) set as the service would read them. */
  async function withEnv<T>(env: Record<string, string>, run: () => Promise<T>): Promise<T> {
    const saved = { ...process.env };
    Object.assign(process.env, env);
    try {
      return await run();
    } finally {
      process.env = saved;
    }
  }
  const masked = (url: string) => url.replace(/:[^:/@]*@/, ":***@");
  const READ_ONLY = [["audit", "--all"], ["audit", "pi_x"], ["replay"], ["as-of", "pi_x", "2026-01-01T00:00:00Z"], ["events", "heads"], ["events", "export"], ["reconcile", "--dry-run"]];

  it("is refused by every command that only reads, naming the schema, and is not created", { timeout: 60_000 }, async () => {
    const url = await testDatabase();
    const shown = masked(url);
    const schema = freshSchema();
    await withEnv({ DATABASE_SCHEMA: schema, DATABASE_URL: "", CARDFLOW_STORE: "" }, async () => {
      for (const args of READ_ONLY) {
        const refused = await cardflow(...args, "--store", url);
        expect(refused, args.join(" ")).toEqual({ code: 2, out: "", err: `cardflow: --store: no store in PostgreSQL ${shown} (schema ${schema}); nothing was created (check DATABASE_SCHEMA)\n` });
      }
    });
    // the service's own store (DATABASE_URL, DATABASE_SCHEMA) alike
    await withEnv({ DATABASE_SCHEMA: schema, DATABASE_URL: url, CARDFLOW_STORE: "" }, async () => {
      for (const args of READ_ONLY) {
        const refused = await cardflow(...args);
        expect(refused.code, args.join(" ")).toBe(2);
        expect(refused.err).toMatch(new RegExp(`^cardflow: no store in PostgreSQL \\S+ \\(schema ${schema}\\): nothing was created; .*or give --store\\n$`));
      }
    });
    expect(await schemaExists(url, schema)).toBe(false);
  });

  it("is created by an import, named on stderr, and dropped again when the import is refused", { timeout: 60_000 }, async () => {
    const url = await testDatabase();
    const shown = masked(url);
    const bad = join(dir, "bad-for-postgres.jsonl");
    writeFileSync(bad, '{"not":"an event"}\n');
    const schema = freshSchema();
    await withEnv({ DATABASE_SCHEMA: schema, DATABASE_URL: "", CARDFLOW_STORE: "" }, async () => {
      const refused = await cardflow("events", "import", bad, "--store", url);
      expect(refused.code).toBe(2);
      expect(refused.err).toContain(`cardflow: store: PostgreSQL ${shown} (schema ${schema})\n`);
      expect(refused.err).toContain(`cardflow: the store PostgreSQL ${shown} (schema ${schema}) was new: nothing the command made of it is left\n`);
      expect(await schemaExists(url, schema)).toBe(false);

      const good = join(dir, "good-for-postgres.jsonl");
      writeFileSync(good, (await cardflow("events", "export", "--store", `sqlite:${await sqliteStore("for-postgres.sqlite")}`)).out);
      expect((await cardflow("events", "import", good, "--store", url)).code).toBe(0);
      // the schema now holds a store: kept when a later import is refused
      expect((await cardflow("events", "import", bad, "--store", url)).code).toBe(2);
      const heads = await cardflow("events", "heads", "--store", url);
      expect(heads.code).toBe(0);
      expect(Object.keys(JSON.parse(heads.out))).toHaveLength(1);
    });
  });
});
