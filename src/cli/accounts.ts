// `cardflow accounts create <external_account_id>`: opens a merchant account in the service's store
// (DATABASE_URL, else DATA_DIR; or --store) and issues its first API key; `cardflow accounts key <id>` issues
// another. Only the key goes to stdout, so scripts can capture it: KEY=$(npx cardflow accounts
// create acct_1); the store used is said on stderr. `accounts keys <id>` lists an account's keys
// (never the key), `accounts revoke <key-id>` and `accounts rotate <key-id> [--grace 1h]` manage them.
import { Option, type Command } from "commander";
import { createApiKeys, parseDuration, type ApiKeyInfo } from "../api-keys.js";
import { isoTimestamp } from "../clock.js";
import { randomIds } from "../ids.js";
import { configFromEnv, openStores, type Stores } from "../config.js";
import { createEngine, type Engine } from "../engine.js";
import { decideOpenAccount } from "../engine/deciders/accounts.js";
import { Conflict, InvalidRequest, NotFound } from "../errors.js";
import { OpenAccountInput, parseInput } from "../inputs.js";
import { StoreMissing } from "../store/port.js";
import { action, processIo, type CliIo } from "./io.js";
import { openStore, READS, storeIds, storeOption, storeOptionsGiven, WRITES, type StoreUse } from "./store-option.js";

/**
 * Opens the service's stores as `npm start` does (DATABASE_URL, else DATA_DIR); `dataDir` given on
 * the command line: SQLite under it, whatever DATABASE_URL says.
 */
export type OpenService = (dataDir: string | undefined, use: StoreUse) => Promise<Stores>;

const openService: OpenService = (dataDir, use) => openStores(configFromEnv({ ...process.env, ...(dataDir ? { DATA_DIR: dataDir, CARDFLOW_DATA_DIR_FROM: "--data-dir", DATABASE_URL: "" } : {}) }), use);

/**
 * Where the command's store is. An option given on the command line wins over a variable, as for
 * serve: --store, else --data-dir, else CARDFLOW_STORE (--store's variable), else the service's
 * (DATABASE_URL, else DATA_DIR).
 */
function whereOf(opts: { dataDir?: string; store?: string }, command: Command): { dataDir?: string; store?: string } {
  const [given] = storeOptionsGiven(command, opts, ["store", "dataDir"] as const);
  if (given === "dataDir") return { dataDir: opts.dataDir! };
  return opts.store !== undefined ? { store: opts.store } : {};
}

const expiresOption = () => new Option("--expires <duration>", "the key stops working after this long (e.g. 90d, 12h); default: no expiry");
// nobody waits on the CLI: it catches the read models up completely (a request's wait is bounded)
const keysOf = (engine: Engine) => createApiKeys(engine, { readModelsCurrent: "complete" });

/** --expires as a span (ms), or null; checked before a store is opened (a usage error leaves nothing behind). */
function expiresIn(expires: string | undefined): number | null {
  if (expires === undefined) return null;
  const ms = parseDuration(expires, "--expires");
  if (!(ms >= 1_000)) throw new InvalidRequest(`--expires: a key must work for a second at least, got ${JSON.stringify(expires)} (e.g. 90d, 12h)`, "expires");
  return ms;
}
/** That span from the engine's now, as a key's expiry. */
const expiryAt = (engine: Engine, ms: number | null) => (ms === null ? null : isoTimestamp(engine.clock.now() + ms));

/** The library's NotFound says "for this account" (an API caller's scope); the CLI names the store it looked in, and what to run. */
const notFoundIn = (where: string, next: string) => (error: unknown): never => {
  throw error instanceof NotFound ? new NotFound(error.resource, error.id, error.param, `in ${where}; ${next}`) : error;
};
const openIt = (account: string) => `open it with: npx cardflow accounts create ${account}`;
const KEY_IDS = "the ids are listed by: npx cardflow accounts keys <external_account_id>";

function keysText(keys: ApiKeyInfo[]): string {
  if (keys.length === 0) return "no API keys\n";
  const rows = keys.map((k) => [k.id, k.prefix ? `${k.prefix}…` : "(before prefixes)", k.status, k.created, k.last_used ?? "never", k.expires_at ?? "never", k.replaced_by ? `replaced by ${k.replaced_by}` : ""]);
  const head = ["ID", "PREFIX", "STATUS", "CREATED", "LAST USED", "EXPIRES", ""];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  return [head, ...rows].map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd() + "\n").join("");
}

const dataDirOption = () => new Option("--data-dir <dir>", "the service's data directory, SQLite (default: the service's store: DATABASE_URL, else DATA_DIR, else ./data, or data/ in a checkout)");

/** A --store for accounts: keys are found through the read models, so a store that has them. */
async function storeWithReadModels(spec: string, use: StoreUse): Promise<Stores> {
  const opened = await openStore(spec, use);
  if (!opened.readModels) {
    await opened.close();
    throw new InvalidRequest(`--store: ${opened.description} cannot hold accounts and keys; use sqlite:PATH, postgres:URL or memory`, "store");
  }
  return { store: opened.store, readModels: opened.readModels, description: opened.description };
}

export function registerAccounts(program: Command, io: CliIo = processIo, open: OpenService = openService): void {
  /** Runs with an engine on the store (--store, else the service's: said on stderr), closing it whatever happens. */
  async function withEngine(where: { dataDir?: string; store?: string }, use: StoreUse, run: (engine: Engine, where: string) => Promise<void>, { appends = true } = {}) {
    const { store, readModels, description } = where.store ? await storeWithReadModels(where.store, use) : await open(where.dataDir, use).catch((error: unknown) => {
      throw error instanceof StoreMissing ? new InvalidRequest(`${error.message}, or give --data-dir or --store`, "data_dir") : error;
    });
    io.err(`cardflow: store: ${description}\n`);
    if (appends && where.store === "memory") io.err("cardflow: a memory store ends with this command: nothing it writes (a key neither) can be used afterwards\n");
    // request ids from the store's counter, as the server's (one counter for the deployment); a
    // listing takes none (the counter counts requests that change something)
    const ids = await (appends ? storeIds(store) : Promise.resolve(randomIds())).catch(async (error: unknown) => {
      await Promise.all([store.close(), readModels.close()]);
      throw error;
    });
    const engine = createEngine({ store, readModels, ids });
    try {
      await run(engine, description);
    } finally {
      await engine.close();
    }
  }

  const accounts = program.command("accounts").summary("merchant accounts and their API keys").description("merchant accounts of the HTTP API and their API keys, in the service's store (DATABASE_URL, else DATA_DIR), or the one --store names");

  accounts
    .command("create")
    .summary("open a merchant account and print its new API key")
    .description("open a merchant account and issue its API key; prints only the key (shown once: only its SHA-256 is stored). With --exists-ok, an account that already exists (with the same processor and currency) gets a new key instead, so the command can be run again")
    .argument("<external_account_id>", "the merchant account reference callers send as external_account_id")
    .addOption(new Option("--processor <processor>", "processor of its card-not-present payments").choices(["A", "B"]).default("A"))
    .option("--currency <code>", "ISO 4217 currency of its payments", "USD")
    .option("--exists-ok", "if the account exists, issue another key for it instead of failing")
    .addOption(expiresOption())
    .addOption(dataDirOption())
    .addOption(storeOption({ readOnly: false, readModels: true }))
    .action(
      action(io, async (external_account_id: string, opts: { processor: "A" | "B"; currency: string; existsOk?: boolean; expires?: string; dataDir?: string; store?: string }, command: Command) => {
        // what is refused opens nothing: a bad --expires, id or currency (one that is no ISO 4217
        // currency too, the decider's refusal: named whether or not the account exists)
        const expiresMs = expiresIn(opts.expires);
        const decision = decideOpenAccount(parseInput(OpenAccountInput, { external_account_id, processor: opts.processor, currency: opts.currency }));
        if ("refuse" in decision) throw decision.refuse;
        return withEngine(whereOf(opts, command), WRITES, async (engine, where) => {
          const expiresAt = expiryAt(engine, expiresMs);
          const existing = await engine.getAccount(external_account_id).catch((error: unknown) => (error instanceof NotFound ? undefined : Promise.reject(error)));
          if (!existing) await engine.openAccount({ external_account_id, processor: opts.processor, currency: opts.currency }, { actor: "cli" });
          else if (!opts.existsOk) {
            throw new Conflict(`merchant account ${external_account_id} already exists in ${where}; for another API key run: npx cardflow accounts key ${external_account_id}`, "account_exists");
          } else {
            // an option given on the command line that the account does not have is not ignored
            const given = (name: string) => command.getOptionValueSource(name) !== "default";
            if ((given("processor") && existing.processor !== opts.processor) || (given("currency") && existing.currency !== opts.currency.toUpperCase())) {
              throw new Conflict(`merchant account ${external_account_id} already exists with processor ${existing.processor} and currency ${existing.currency}`, "account_exists");
            }
          }
          const { key } = await keysOf(engine).issue(external_account_id, "cli", { expiresAt });
          io.out(`${key}\n`);
        });
      }),
    );

  accounts
    .command("key")
    .summary("issue another API key for an account")
    .description("issue another API key for an existing merchant account; prints only the key (earlier keys keep working)")
    .argument("<external_account_id>", "an existing merchant account")
    .addOption(expiresOption())
    .addOption(dataDirOption())
    .addOption(storeOption({ readOnly: false, readModels: true }))
    .action(
      action(io, async (external_account_id: string, opts: { expires?: string; dataDir?: string; store?: string }, command: Command) => {
        const expiresMs = expiresIn(opts.expires);
        return withEngine(whereOf(opts, command), READS, async (engine, where) => {
          await engine.getAccount(external_account_id).catch(notFoundIn(where, openIt(external_account_id)));
          const { key } = await keysOf(engine).issue(external_account_id, "cli", { expiresAt: expiryAt(engine, expiresMs) });
          io.out(`${key}\n`);
        });
      }),
    );

  accounts
    .command("keys")
    .summary("list an account's API keys")
    .description("list an account's API keys, newest first: id, prefix, status, created, last used (recorded at most once a minute), expiry; never the key itself")
    .argument("<external_account_id>", "an existing merchant account")
    .option("--json", "print the list as JSON")
    .addOption(dataDirOption())
    .addOption(storeOption({ readModels: true }))
    .action(
      action(io, async (external_account_id: string, opts: { json?: boolean; dataDir?: string; store?: string }, command: Command) =>
        withEngine(whereOf(opts, command), READS, async (engine, where) => {
          const keys = await keysOf(engine).list(external_account_id).catch(notFoundIn(where, openIt(external_account_id)));
          io.out(opts.json ? `${JSON.stringify(keys, null, 2)}\n` : keysText(keys));
        }, { appends: false }),
      ),
    );

  accounts
    .command("revoke")
    .summary("revoke an API key")
    .description("revoke an API key: every request with it answers 401, in every process, within a second")
    .argument("<key_id>", "the key's id (key_…, from accounts keys)")
    .addOption(dataDirOption())
    .addOption(storeOption({ readOnly: false, readModels: true }))
    .action(
      action(io, async (keyId: string, opts: { dataDir?: string; store?: string }, command: Command) =>
        withEngine(whereOf(opts, command), READS, async (engine, where) => {
          const revoked = await keysOf(engine).revoke(keyId, { actor: "cli" }).catch(notFoundIn(where, KEY_IDS));
          io.err(`cardflow: revoked ${revoked.id} of ${revoked.external_account_id}\n`);
        }),
      ),
    );

  accounts
    .command("rotate")
    .summary("replace an API key by a new one")
    .description("issue a new key for the key's account and print it; the old key keeps working for the grace period, then answers 401")
    .argument("<key_id>", "the key's id (key_…, from accounts keys)")
    .option("--grace <duration>", "how long the old key keeps working (e.g. 1h, 7d)", "0s")
    .addOption(new Option("--expires <duration>", "the new key stops working after this long (e.g. 90d); default: the old key's lifetime from now, or no expiry if it had none"))
    .addOption(dataDirOption())
    .addOption(storeOption({ readOnly: false, readModels: true }))
    .action(
      action(io, async (keyId: string, opts: { grace: string; expires?: string; dataDir?: string; store?: string }, command: Command) => {
        const [graceMs, expiresMs] = [parseDuration(opts.grace, "--grace"), expiresIn(opts.expires)];
        return withEngine(whereOf(opts, command), READS, async (engine, where) => {
          const rotation = { graceMs, ...(expiresMs === null ? {} : { expiresAt: expiryAt(engine, expiresMs) }), actor: "cli" };
          const { key, key_id, replaced } = await keysOf(engine).rotate(keyId, rotation).catch(notFoundIn(where, KEY_IDS));
          io.err(`cardflow: ${key_id} replaces ${keyId}, which works until ${replaced.expires_at}\n`);
          io.out(`${key}\n`);
        });
      }),
    );
}
