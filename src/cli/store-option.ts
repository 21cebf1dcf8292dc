// The `--store` option of commands that read or write events:
//   sqlite:PATH     the embedded SQLite store (events and read models in one file)
//   postgres:URL    PostgreSQL (a postgres:// URL is also accepted as it is)
//   kurrentdb:URL   KurrentDB / EventStoreDB, events only (a kurrentdb:// URL also as it is)
//   jsonl:PATH      an export file, read-only (audit a copy without touching any database)
//   memory          an empty in-memory store (tests, dry runs)
// Default: the CARDFLOW_STORE environment variable, else the service's own store as `npm start`
// opens it (src/config.ts): PostgreSQL when DATABASE_URL is set, else SQLite under DATA_DIR.
// PostgreSQL uses the schema DATABASE_SCHEMA (default cardflow).
import { readFile } from "node:fs/promises";
import { Option } from "commander";
import { configFromEnv, openStores } from "../config.js";
import { InvalidRequest } from "../errors.js";
import { createMemoryReadModels } from "../store/memory-read-models.js";
import { createMemoryStore } from "../store/memory.js";
import type { EventStore, ReadModelStore, RecordedEvent } from "../store/port.js";
import { eventsStore } from "../audit/source.js";
import { createPostgresStore } from "../store/postgres.js";
import { createSqliteStore } from "../store/sqlite.js";
import { parseLine } from "../audit/transfer.js";

export interface OpenedStore {
  store: EventStore;
  /** The read models kept beside the events, when the store has them. */
  readModels?: ReadModelStore;
  close(): Promise<void>;
}

export const storeOption = () =>
  new Option("--store <store>", "event store: sqlite:PATH, postgres:URL, kurrentdb:URL, jsonl:PATH (an export, read-only) or memory; default: the service's store (DATABASE_URL, else DATA_DIR)").env("CARDFLOW_STORE");

/** Reads a JSONL export as it is (only its lines' shape is checked), so an audit sees what the file holds. */
export async function readJsonl(path: string): Promise<RecordedEvent[]> {
  const lines = (await readFile(path, "utf8")).split("\n");
  const parsed = lines.map((line, i) => (line.trim() === "" ? undefined : parseLine(line, i + 1))).filter((e) => e !== undefined);
  const problems = parsed.filter((p) => typeof p === "string");
  if (problems.length) throw new InvalidRequest(`--store: ${path} is not an event export:\n  ${problems.join("\n  ")}`, "store");
  return parsed as RecordedEvent[];
}

export async function openStore(spec: string | undefined): Promise<OpenedStore> {
  if (!spec) return both(await openStores(configFromEnv()));
  if (/^postgres(ql)?:\/\//.test(spec)) spec = `postgres:${spec}`;
  if (/^(kurrentdb|esdb)(\+discover)?:\/\//.test(spec)) spec = `kurrentdb:${spec}`;
  const colon = spec.indexOf(":");
  const [kind, location] = colon < 0 ? [spec, ""] : [spec.slice(0, colon), spec.slice(colon + 1)];
  switch (kind) {
    case "memory":
      return both({ store: createMemoryStore(), readModels: createMemoryReadModels() });
    case "sqlite": {
      if (!location) throw new InvalidRequest("--store: sqlite:PATH needs a path", "store");
      const { events, readModels } = createSqliteStore({ path: location });
      return both({ store: events, readModels });
    }
    case "postgres": {
      if (!location) throw new InvalidRequest("--store: postgres:URL needs a connection URL", "store");
      const { events, readModels } = await createPostgresStore({ connectionString: location, schema: configFromEnv().databaseSchema });
      return both({ store: events, readModels });
    }
    case "kurrentdb": {
      if (!location) throw new InvalidRequest("--store: kurrentdb:URL needs a connection URL", "store");
      // loaded on demand: its gRPC client is heavy for every other command
      const { createKurrentStore } = await import("../store/kurrentdb.js");
      const store = await createKurrentStore({ url: location });
      return { store, close: () => store.close() };
    }
    case "jsonl": {
      if (!location) throw new InvalidRequest("--store: jsonl:PATH needs a path", "store");
      const store = eventsStore(await readJsonl(location));
      return { store, close: () => store.close() };
    }
    default:
      throw new InvalidRequest(`--store: unknown store ${JSON.stringify(kind)}; use sqlite:PATH, postgres:URL, kurrentdb:URL, jsonl:PATH or memory`, "store");
  }
}

/** An event store and its read models, closed together. */
const both = ({ store, readModels }: { store: EventStore; readModels: ReadModelStore }): OpenedStore => ({
  store,
  readModels,
  close: async () => void (await Promise.all([store.close(), readModels.close()])),
});

/** Opens the store, runs, closes it whatever happens. */
export async function withStore<T>(spec: string | undefined, run: (opened: OpenedStore) => Promise<T>): Promise<T> {
  const opened = await openStore(spec);
  try {
    return await run(opened);
  } finally {
    await opened.close();
  }
}
