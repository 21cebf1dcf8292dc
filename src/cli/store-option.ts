// The `--store` option of commands that read or write events:
//   sqlite:PATH     the embedded SQLite store (events and read models in one file)
//   postgres:URL    PostgreSQL (a postgres:// URL is also accepted as it is)
//   kurrentdb:URL   KurrentDB / EventStoreDB, events only (a kurrentdb:// URL also as it is)
//   jsonl:PATH      an export file, read-only (audit a copy without touching any database)
//   memory          an empty in-memory store (tests, dry runs)
// Default: the CARDFLOW_STORE environment variable, else the service's own store as `npm start`
// opens it (src/config.ts): PostgreSQL when DATABASE_URL is set (schema DATABASE_SCHEMA, default
// cardflow), else SQLite under DATA_DIR. Commands that only read refuse a store that does not
// exist, a SQLite file or a PostgreSQL schema (a mistyped path or schema must never read as an
// empty, clean store), and every command says on stderr which store it used.
import { chmodSync, existsSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { basename, dirname, extname, join, resolve } from "node:path";
import { Option, type Command } from "commander";
import { configFromEnv, openFailed, openStores, withoutPassword, type ServiceConfig as Config } from "../config.js";
import { missingSqliteStore } from "../store/sqlite/open.js";
import { InvalidRequest, NotFound } from "../errors.js";
import { createMemoryReadModels, createMemoryStore } from "../store/memory/index.js";
import { StoreMissing, type EventStore, type ReadModelStore, type RecordedEvent } from "../store/port.js";
import { StoreUnavailable } from "../store/port/unavailable.js";
import { eventsStore } from "../audit/source.js";
import { createKurrentStore, createPostgresStore } from "../store/optional.js";
import { createSqliteStore } from "../store/sqlite/index.js";
import { parseLine } from "../audit/transfer.js";
import { randomIds, storeRequestIds, type Ids } from "../ids.js";
import { unreadableFile, type CliIo } from "./io.js";

export interface OpenedStore {
  /** What was opened, for messages: "SQLite /abs/path", "PostgreSQL postgres://user:***@host/db". */
  description: string;
  store: EventStore;
  /** The read models kept beside the events, when the store has them. */
  readModels?: ReadModelStore;
  close(): Promise<void>;
  /** An export (jsonl:PATH): read as it is, it never gets new events. */
  export?: true;
  /** A store this command created: removes a SQLite store's files (and the directories made for them), a PostgreSQL schema. */
  discard?: () => void | Promise<void>;
}

/** What opening a SQLite store at `path` would leave behind when it did not exist: called after it is closed. */
function discarder(path: string): (() => void) | undefined {
  if (existsSync(path)) return emptied(path);
  let top: string | null = null;
  let existing = dirname(path);
  for (; !existsSync(existing); existing = dirname(existing)) top = existing;
  // a file where a directory would be: opening the store fails, naming it; nothing to remove
  if (!statSync(existing).isDirectory()) return undefined;
  const dir = dirname(path);
  const before = top ? null : new Set(readdirSync(dir));
  const stem = basename(path, extname(path)); // cardflow.sqlite, -wal, -shm, cardflow.read-models.sqlite...
  return () => {
    if (top) return rmSync(top, { recursive: true, force: true });
    for (const name of readdirSync(dir)) if (!before!.has(name) && name.startsWith(stem)) rmSync(join(dir, name), { force: true });
  };
}

/**
 * An empty file counts as no store: a command that made one in it and failed puts it back as it was
 * (empty, its mode, no file beside it). Undefined for anything else that exists.
 */
function emptied(path: string): (() => void) | undefined {
  const stat = statSync(path);
  if (!stat.isFile() || stat.size > 0) return undefined;
  const dir = dirname(path);
  const before = new Set(readdirSync(dir));
  const stem = basename(path, extname(path));
  return () => {
    writeFileSync(path, "");
    chmodSync(path, stat.mode & 0o7777);
    for (const name of readdirSync(dir)) if (!before.has(name) && name.startsWith(stem)) rmSync(join(dir, name), { force: true });
  };
}

/**
 * --store, naming the stores the command takes: `readOnly`, the commands that only read also take
 * an export (jsonl:PATH); `readModels`, those that need read models beside the events (accounts and
 * keys, serve) take no KurrentDB (events only) nor export.
 */
export const storeOption = ({ readOnly = true, readModels = false } = {}) => {
  const kinds = ["sqlite:PATH", "postgres:URL", ...(readModels ? [] : ["kurrentdb:URL"]), ...(readOnly && !readModels ? ["jsonl:PATH (an export, read-only)"] : [])];
  return new Option("--store <store>", `event store: ${kinds.join(", ")} or memory; default: the service's store (DATABASE_URL, else DATA_DIR)`).env("CARDFLOW_STORE");
};

/**
 * Of the options that name a store (`--store`, `--data-dir`, `--database-url`), those given on the
 * command line, in `names`' order: an option wins over its variable (`--store`'s CARDFLOW_STORE).
 */
export const storeOptionsGiven = <N extends string>(command: Command, opts: Partial<Record<N, unknown>>, names: readonly N[]): N[] =>
  names.filter((name) => opts[name] !== undefined && command.getOptionValueSource(name) === "cli");

/** Reads a JSONL export as it is (only its lines' shape is checked), so an audit sees what the file holds. */
export async function readJsonl(path: string): Promise<RecordedEvent[]> {
  const text = await readFile(path, "utf8").catch((error: unknown) => {
    throw new InvalidRequest(`--store: jsonl:${path} ${unreadableFile(error)}`, "store");
  });
  const lines = text.split("\n");
  const parsed = lines.map((line, i) => (line.trim() === "" ? undefined : parseLine(line, i + 1))).filter((e) => e !== undefined);
  const problems = parsed.filter((p) => typeof p === "string");
  // the first few: a file that is not an export at all would be named line by line (thousands)
  const shown = problems.slice(0, 5).join("\n  ") + (problems.length > 5 ? `\n  … and ${problems.length - 5} more lines` : "");
  if (problems.length) throw new InvalidRequest(`--store: ${path} is not an event export:\n  ${shown}`, "store");
  return parsed as RecordedEvent[];
}

/** How a command uses its store: read-only commands (`mustExist`) never create one. */
export interface StoreUse {
  mustExist: boolean;
  /**
   * No bound on a PostgreSQL statement (src/store/postgres/pool.ts): a command over a whole store
   * (audit --all, events export or import) may run long ones; one run by hand, stopped by hand.
   */
  unbounded?: boolean;
}

/** Commands that only read: the store must exist. */
export const READS: StoreUse = { mustExist: true, unbounded: true };
/** Commands that write (events import): a new store may be created. */
export const WRITES: StoreUse = { mustExist: false, unbounded: true };
/** The server (serve --store): every statement bounded, so a database that does not answer gets 503s, not hung requests. */
export const SERVES: StoreUse = { mustExist: false };


export async function openStore(spec: string | undefined, { mustExist, unbounded = false }: StoreUse, config: Config = configFromEnv()): Promise<OpenedStore> {
  if (!spec) {
    const sqliteDiscard = config.databaseUrl ? undefined : discarder(join(resolve(config.dataDir), "cardflow.sqlite"));
    const { store, readModels, description, discard = sqliteDiscard } = await openStores(config, { mustExist, unbounded }).catch((error: unknown) => {
      throw error instanceof StoreMissing ? new InvalidRequest(`${error.message}, or give --store`, "store") : error;
    });
    return { ...both(description, { store, readModels }), ...(discard ? { discard } : {}) };
  }
  if (/^postgres(ql)?:\/\//.test(spec)) spec = `postgres:${spec}`;
  if (/^(kurrentdb|esdb)(\+discover)?:\/\//.test(spec)) spec = `kurrentdb:${spec}`;
  const colon = spec.indexOf(":");
  const [kind, location] = colon < 0 ? [spec, ""] : [spec.slice(0, colon), spec.slice(colon + 1)];
  switch (kind) {
    case "memory":
      if (colon >= 0) throw new InvalidRequest(`--store: memory takes no location (an empty store of this process), got ${JSON.stringify(spec)}`, "store");
      return both("an empty in-memory store", { store: createMemoryStore(), readModels: createMemoryReadModels() });
    case "sqlite": {
      if (!location) throw new InvalidRequest("--store: sqlite:PATH needs a path", "store");
      const path = resolve(location);
      const missing = mustExist ? missingSqliteStore(path) : null;
      if (missing !== null) throw new InvalidRequest(`--store: no SQLite store at ${path}${missing && ` (${missing})`}; nothing was created (check the path)`, "store");
      const discard = discarder(path);
      const description = `SQLite ${path}`;
      let opened: ReturnType<typeof createSqliteStore>;
      try {
        opened = createSqliteStore({ path });
      } catch (error) {
        discard?.(); // what the failed open made (the directories for a path under a file, say)
        throw openFailed(error, description);
      }
      return { ...both(description, { store: opened.events, readModels: opened.readModels }), ...(discard ? { discard } : {}) };
    }
    case "postgres": {
      if (!location) throw new InvalidRequest("--store: postgres:URL needs a connection URL", "store");
      // as DATABASE_URL is checked: another database's URL, or a path, is no PostgreSQL to try
      if (!/^postgres(ql)?:\/\//.test(location)) throw new InvalidRequest(`--store: postgres:URL needs a postgres:// URL, got ${JSON.stringify(withoutPassword(location))}`, "store");
      const description = `PostgreSQL ${withoutPassword(location)} (schema ${config.databaseSchema})`;
      const { events, readModels, discard } = await createPostgresStore({ connectionString: location, schema: config.databaseSchema, mustExist, ...(unbounded && { statementTimeoutMillis: 0 }) }).catch((error: unknown) => {
        throw error instanceof StoreMissing ? new InvalidRequest(`--store: no store in ${description}; nothing was created (check DATABASE_SCHEMA)`, "store") : openFailed(error, description, { source: "--store", url: location });
      });
      return { ...both(description, { store: events, readModels }), ...(discard ? { discard } : {}) };
    }
    case "kurrentdb": {
      if (!location) throw new InvalidRequest("--store: kurrentdb:URL needs a connection URL", "store");
      const description = `KurrentDB ${withoutPassword(location)}`;
      // the client connects on its first call: asked for the head here, so a server that cannot be
      // reached is said as such, naming it, not as a bare client error in the middle of a command
      // (the client's ErrorType "unavailable" is the store unavailable, as the other adapters say it)
      const store = await createKurrentStore({ url: location })
        .then(async (opened) => {
          await opened.head().catch(async (error: unknown) => {
            await opened.close().catch(() => undefined);
            throw (error as { type?: unknown })?.type === "unavailable" ? new StoreUnavailable("KurrentDB cannot be reached", { cause: error }) : error;
          });
          return opened;
        })
        .catch((error: unknown) => {
          throw openFailed(error, description, { source: "--store", url: location, kind: "KurrentDB" });
        });
      return { description, store, close: () => store.close() };
    }
    case "jsonl": {
      if (!location) throw new InvalidRequest("--store: jsonl:PATH needs a path", "store");
      const path = resolve(location);
      if (!existsSync(path)) throw new InvalidRequest(`--store: no export file at ${path}`, "store");
      const store = eventsStore(await readJsonl(path));
      return { description: `the export ${path} (read-only)`, store, close: () => store.close(), export: true };
    }
    default:
      throw new InvalidRequest(`--store: unknown store ${JSON.stringify(kind)}; use sqlite:PATH, postgres:URL, kurrentdb:URL, jsonl:PATH or memory`, "store");
  }
}

/**
 * Ids for a command that appends: request ids from the store's counter, as the server takes them
 * (one counter for every process of a deployment), in small blocks (a command appends few events).
 */
export const storeIds = (store: EventStore): Promise<Ids> => storeRequestIds(randomIds(), store, 100);

/** An event store and its read models, closed together. */
const both = (description: string, { store, readModels }: { store: EventStore; readModels: ReadModelStore }): OpenedStore => ({
  description,
  store,
  readModels,
  close: async () => void (await Promise.all([store.close(), readModels.close()])),
});

/**
 * Opens the store, says on stderr which one, runs, closes it whatever happens. A resource the
 * store does not have is named with the store, so a wrong store does not read as a wrong id. A
 * command that fails leaves no store it created behind (a refused import into a new SQLite file or PostgreSQL schema).
 */
export async function withStore<T>(io: CliIo, spec: string | undefined, use: StoreUse, run: (opened: OpenedStore) => Promise<T>, config?: Config): Promise<T> {
  const opened = await openStore(spec, use, config);
  io.err(`cardflow: store: ${opened.description}\n`);
  let failed = true;
  try {
    const result = await run(opened);
    failed = false;
    return result;
  } catch (error) {
    if (error instanceof NotFound) throw new NotFound(error.resource, error.id, error.param, `in ${opened.description}`);
    throw error;
  } finally {
    await opened.close();
    if (failed && opened.discard) {
      await opened.discard();
      io.err(`cardflow: the store ${opened.description} was new: nothing the command made of it is left\n`);
    }
  }
}
