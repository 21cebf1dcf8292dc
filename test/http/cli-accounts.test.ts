// `cardflow accounts create|key`: prints only the new key (the store used on stderr); the key then
// works against the API. Run as `cardflow ...` runs, on a shared in-memory store.
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { defaultDataDir } from "../../src/package-root.js";
import { createApiKeys } from "../../src/api-keys.js";
import { REQUEST_ID_SEQUENCE } from "../../src/ids.js";
import { createEngine } from "../../src/engine.js";
import { createServer } from "../../src/http/server.js";
import { createMemoryReadModels, createMemoryStore } from "../../src/store/memory/index.js";
import { cardflowOn } from "../audit/run-cli.js";

afterEach(() => {
  process.exitCode = undefined;
});

describe("cardflow accounts", () => {
  const store = createMemoryStore();
  const readModels = createMemoryReadModels();
  // the CLI closes what it opens; the shared in-memory store must outlive it
  const openService = async () => ({ store: { ...store, close: async () => {} }, readModels: { ...readModels, close: async () => {} }, description: "memory" });
  const cardflow = (...args: string[]) => cardflowOn({ interactive: false, openService }, ...args);

  it("create prints only the key, which then authenticates as that account; stderr names the store", async () => {
    const created = await cardflow("accounts", "create", "acct_cli", "--processor", "B", "--currency", "EUR");
    expect(created).toMatchObject({ code: 0, err: "cardflow: store: memory\n" });
    expect(created.out).toMatch(/^sk_[0-9A-Za-z]{32,}\n$/);
    const key = created.out.trim();

    const engine = createEngine({ store, readModels });
    const app = createServer({ engine });
    try {
      expect(await engine.getAccount("acct_cli")).toEqual({ external_account_id: "acct_cli", processor: "B", currency: "EUR" });
      const res = await app.inject({ method: "GET", url: "/v2/hardware?external_account_id=acct_cli", headers: { authorization: `Bearer ${key}` } });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ data: [] });

      const another = await cardflow("accounts", "key", "acct_cli");
      expect(another.code).toBe(0);
      expect(another.out.trim()).not.toBe(key);
      const again = await app.inject({ method: "GET", url: "/v2/hardware?external_account_id=acct_cli", headers: { authorization: `Bearer ${another.out.trim()}` } });
      expect(again.statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });

  it("an account that exists: create says what to run instead; --exists-ok issues a key, run after run", async () => {
    await cardflow("accounts", "create", "acct_twice");
    const twice = await cardflow("accounts", "create", "acct_twice");
    expect(twice).toMatchObject({ code: 2, out: "" });
    expect(twice.err).toContain("cardflow: merchant account acct_twice already exists in memory; for another API key run: npx cardflow accounts key acct_twice");
    const keys = [await cardflow("accounts", "create", "acct_twice", "--exists-ok"), await cardflow("accounts", "create", "acct_new", "--exists-ok")];
    for (const k of keys) expect(k).toMatchObject({ code: 0, out: expect.stringMatching(/^sk_\w+\n$/) });
    // an option the existing account does not have is not silently ignored
    const other = await cardflow("accounts", "create", "acct_twice", "--exists-ok", "--currency", "EUR");
    expect(other).toMatchObject({ code: 2, out: "" });
    expect(other.err).toContain("already exists with processor A and currency USD");
  });

  it("refuses an unknown processor (usage, exit 2) and a key for no account; stdout stays empty", async () => {
    const missing = await cardflow("accounts", "key", "acct_nobody");
    expect(missing).toMatchObject({ code: 2, out: "" });
    expect(missing.err).toContain('no merchant account "acct_nobody" in memory; open it with: npx cardflow accounts create acct_nobody');
    expect(missing.err).not.toContain("for this account");
    const badProcessor = await cardflow("accounts", "create", "acct_c", "--processor", "C");
    expect(badProcessor).toMatchObject({ code: 2, out: "" });
    expect(badProcessor.err).toContain("error: option '--processor <processor>' argument 'C' is invalid");
  });

  it("an unknown account or key id is said as not in the store, with what to run: the CLI acts for no account", async () => {
    const keys = await cardflow("accounts", "keys", "acct_nonexist");
    expect(keys).toMatchObject({ code: 2, out: "" });
    expect(keys.err).toContain('cardflow: no merchant account "acct_nonexist" in memory; open it with: npx cardflow accounts create acct_nonexist');
    for (const command of ["revoke", "rotate"]) {
      const unknown = await cardflow("accounts", command, "key_nonexistent");
      expect(unknown, command).toMatchObject({ code: 2, out: "" });
      expect(unknown.err, command).toContain('cardflow: no API key "key_nonexistent" in memory; the ids are listed by: npx cardflow accounts keys <external_account_id>');
    }
    for (const refused of [keys, await cardflow("accounts", "revoke", "key_nonexistent")]) expect(refused.err).not.toContain("for this account");
  });

  it("a bad --expires is refused naming it, before the account is opened: the same create then works", async () => {
    for (const expires of ["0", "abc", "100000000d", "0.5ms", "999ms"]) {
      const refused = await cardflow("accounts", "create", "acct_expiring", "--expires", expires);
      expect(refused, expires).toMatchObject({ code: 2, out: "" });
      expect(refused.err, expires).toMatch(/^cardflow: --expires: .*got/m);
    }
    expect((await store.readAll()).filter((e) => e.stream === "account-acct_expiring")).toEqual([]);
    const created = await cardflow("accounts", "create", "acct_expiring", "--expires", "90d");
    expect(created.code, created.err).toBe(0);
    expect(created.out.trim()).toMatch(/^sk_/);
  });

  it("an account id or currency the account cannot have is refused before any store is opened (a new store was left behind)", async () => {
    const before = (await store.readAll()).length;
    for (const args of [["acct_cur", "--currency", "usdd"], ["acct_cur", "--currency", "XX1"], ["acct_cur", "--currency", "XYZ"], [""], ["x".repeat(256)]]) {
      const refused = await cardflow("accounts", "create", ...args);
      expect(refused, args.join(" ")).toMatchObject({ code: 2, out: "" });
      expect(refused.err, args.join(" ")).not.toContain("cardflow: store:"); // said when a store is opened
    }
    expect((await store.readAll()).length).toBe(before);
    // an account that exists: a currency that is no ISO 4217 one is named first, not "already exists"
    expect((await cardflow("accounts", "create", "acct_cur_kept")).code).toBe(0);
    for (const flags of [[], ["--exists-ok"]]) {
      const refused = await cardflow("accounts", "create", "acct_cur_kept", "--currency", "XYZ", ...flags);
      expect(refused, flags.join(" ")).toMatchObject({ code: 2, out: "" });
      expect(refused.err, flags.join(" ")).toBe("cardflow: currency: XYZ is not an ISO 4217 currency with minor units (metals, SDR and accounting units are not charged on cards)\n");
    }
  });

  it("an option given twice is refused (commander took the last one silently: an account opened on processor B), a value that looks like an option is a value", async () => {
    const before = (await store.readAll()).length;
    const twice = await cardflow("accounts", "create", "acct_twice", "--processor", "A", "--processor", "B");
    expect(twice).toEqual({ code: 2, out: "", err: "cardflow: --processor is given twice: give it once (the last one would have been taken silently)\n" });
    expect(await cardflow("accounts", "create", "acct_twice", "--expires=1d", "--expires", "2d")).toMatchObject({ code: 2, err: expect.stringContaining("--expires is given twice") });
    expect((await store.readAll()).length).toBe(before);
    // after --, nothing is an option
    expect((await cardflow("accounts", "create", "--currency", "USD", "--", "acct_dashes")).code).toBe(0);
  });

  it("a duration without its unit is refused with examples, --grace and --expires alike (30 was 30 ms: a grace over at once, a key born expired)", async () => {
    await cardflow("accounts", "create", "acct_units");
    const [old] = await createApiKeys(createEngine({ store, readModels })).list("acct_units");
    for (const args of [["rotate", old!.id, "--grace", "30"], ["key", "acct_units", "--expires", "7"], ["rotate", old!.id, "--expires", "7"]]) {
      const refused = await cardflow("accounts", ...args);
      expect(refused, args.join(" ")).toMatchObject({ code: 2, out: "" });
      expect(refused.err, args.join(" ")).toContain(`cardflow: ${args[2]}: expected a number and its unit (e.g. 30d, 12h, 90m, 45s), got "${args[3]}"`);
    }
    // past 100 years (a date a client may not parse, or none JavaScript holds): refused naming the option
    for (const args of [["rotate", old!.id, "--grace", "99999999999d"], ["key", "acct_units", "--expires", "3000000d"]]) {
      const refused = await cardflow("accounts", ...args);
      expect(refused, args.join(" ")).toMatchObject({ code: 2, out: "" });
      expect(refused.err, args.join(" ")).toContain(`cardflow: ${args[2]}: at most 100 years (36500d), got ${JSON.stringify(args[3])}\n`);
    }
    // nothing issued nor rotated; with its unit the grace is what it says
    expect(await createApiKeys(createEngine({ store, readModels })).list("acct_units")).toEqual([old]);
    const rotated = await cardflow("accounts", "rotate", old!.id, "--grace", "30m");
    expect(rotated.code, rotated.err).toBe(0);
    const graceEnd = (await createApiKeys(createEngine({ store, readModels })).list("acct_units")).find((k) => k.id === old!.id)!.expires_at!;
    expect(Date.parse(graceEnd) - Date.now()).toBeGreaterThan(29 * 60_000);
  });

  it("a rotation that cannot go on says what can: a key whose replacement was revoked names accounts key; a replacement rotated again is followed to the newest", async () => {
    await cardflow("accounts", "create", "acct_dead_end");
    const keys = () => createApiKeys(createEngine({ store, readModels })).list("acct_dead_end");
    const newest = async () => (await keys())[0]!.id;
    const [old] = await keys();
    expect((await cardflow("accounts", "rotate", old!.id, "--grace", "1h")).code).toBe(0);
    const replacement = await newest();
    expect((await cardflow("accounts", "revoke", replacement)).code).toBe(0);
    const issue = "issue a new key for acct_dead_end with: npx cardflow accounts key acct_dead_end";
    // it said "rotate that one", whose rotation said "issue a new key instead", naming no command
    const again = await cardflow("accounts", "rotate", old!.id);
    expect(again).toMatchObject({ code: 2, out: "" });
    expect(again.err).toContain(`cardflow: API key ${old!.id} was rotated already (replaced by ${replacement}, which is revoked): ${issue}\n`);
    expect((await cardflow("accounts", "rotate", replacement)).err).toContain(`cardflow: API key ${replacement} is revoked: ${issue}\n`);
    // what it names works; a chain of rotations is followed to its newest key
    expect((await cardflow("accounts", "key", "acct_dead_end")).code).toBe(0);
    const fresh = await newest();
    expect((await cardflow("accounts", "rotate", fresh)).code).toBe(0);
    const second = await newest();
    expect((await cardflow("accounts", "rotate", fresh)).err).toContain(`cardflow: API key ${fresh} was rotated already (replaced by ${second}): rotate that one, or revoke ${fresh} to end its grace now\n`);
    expect((await cardflow("accounts", "rotate", second)).code).toBe(0);
    const third = await newest();
    expect((await cardflow("accounts", "rotate", fresh)).err).toContain(`cardflow: API key ${fresh} was rotated already (replaced by ${second}, then by ${third}): rotate ${third}, or revoke ${fresh} to end its grace now\n`);
  });

  it("accounts key refuses a data directory without a store, creating nothing", async () => {
    const dir = await mkdtemp(join(tmpdir(), "cardflow-cli-accounts-"));
    try {
      const refused = await cardflowOn({ interactive: false }, "accounts", "key", "acct_x", "--data-dir", join(dir, "typo"));
      expect(refused).toMatchObject({ code: 2, out: "" });
      expect(refused.err).toContain(`no store at ${join(dir, "typo", "cardflow.sqlite")}`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("--data-dir on the command line wins over CARDFLOW_STORE and DATABASE_URL, as serve's options do; a listing takes no request ids", async () => {
    const dir = await mkdtemp(join(tmpdir(), "cardflow-cli-accounts-"));
    const saved = { CARDFLOW_STORE: process.env.CARDFLOW_STORE, DATABASE_URL: process.env.DATABASE_URL };
    const sqlite = (name: string) => join(dir, name, "cardflow.sqlite");
    const nextRequestId = async (path: string) => {
      const { createSqliteStore } = await import("../../src/store/sqlite/index.js");
      const { events, readModels } = createSqliteStore({ path });
      try {
        return await events.reserveIds(REQUEST_ID_SEQUENCE, 0);
      } finally {
        await Promise.all([events.close(), readModels.close()]);
      }
    };
    try {
      expect((await cardflowOn({ interactive: false }, "accounts", "create", "acct_env", "--data-dir", join(dir, "env"))).code).toBe(0);
      Object.assign(process.env, { CARDFLOW_STORE: `sqlite:${sqlite("env")}`, DATABASE_URL: "postgres://nobody@127.0.0.1:1/none" });
      const created = await cardflowOn({ interactive: false }, "accounts", "create", "acct_dir", "--data-dir", join(dir, "given"));
      expect(created).toMatchObject({ code: 0, err: `cardflow: store: SQLite ${sqlite("given")}\n` });
      // without the option, the variable's store (CARDFLOW_STORE over DATABASE_URL)
      const before = await nextRequestId(sqlite("env"));
      const listed = await cardflowOn({ interactive: false }, "accounts", "keys", "acct_env");
      expect(listed).toMatchObject({ code: 0, err: `cardflow: store: SQLite ${sqlite("env")}\n` });
      expect(listed.out).toMatch(/active/);
      expect(await nextRequestId(sqlite("env"))).toBe(before);
      expect((await cardflowOn({ interactive: false }, "accounts", "keys", "acct_dir")).code).toBe(2); // not in the variable's store
    } finally {
      for (const [name, value] of Object.entries(saved)) value === undefined ? delete process.env[name] : (process.env[name] = value);
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("the default data directory is the repository's data/, from whatever folder, for the CLI and npm start alike", async () => {
    const root = new URL("../..", import.meta.url).pathname;
    expect(defaultDataDir()).toBe(join(root, "data"));
    const script = `import("${join(root, "src/config.ts")}").then((c) => console.log(c.configFromEnv({}).dataDir))`;
    const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", "-e", script], { cwd: join(root, "test", "http") });
    expect(stdout.trim()).toBe(join(root, "data"));
  });
});
