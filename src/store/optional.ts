// The stores whose client is an optional peer dependency of the package (pg for PostgreSQL,
// @kurrent/kurrentdb-client for KurrentDB): loaded only when such a store is opened, so a consumer
// on SQLite installs neither. When the package is missing, the error names what to install.
import type { KurrentStoreOptions } from "./kurrentdb/index.js";
import type { PostgresStore, PostgresStoreOptions } from "./postgres/index.js";
import type { EventStore } from "./port.js";

/** A missing optional package, named with the command that installs it. */
export class OptionalPackageMissing extends Error {
  override readonly name = "OptionalPackageMissing";
  constructor(readonly packageName: string, what: string, options: { cause: unknown }) {
    super(`${what} needs the package ${packageName}, which is not installed: npm install ${packageName}`, options);
  }
}

async function load<T>(packageName: string, what: string, module: () => Promise<T>): Promise<T> {
  try {
    return await module();
  } catch (error) {
    const { code, message = "" } = (error ?? {}) as { code?: string; message?: string };
    if ((code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") && message.includes(`'${packageName}'`)) throw new OptionalPackageMissing(packageName, what, { cause: error });
    throw error;
  }
}

/** PostgreSQL events and read models (./postgres/), loading `pg` now. */
export async function createPostgresStore(options: PostgresStoreOptions): Promise<PostgresStore> {
  const postgres = await load("pg", "A PostgreSQL store", () => import("./postgres/index.js"));
  return postgres.createPostgresStore(options);
}

/** A KurrentDB (EventStoreDB) event store (./kurrentdb/), loading `@kurrent/kurrentdb-client` now. */
export async function createKurrentStore(options: KurrentStoreOptions): Promise<EventStore> {
  const kurrent = await load("@kurrent/kurrentdb-client", "A KurrentDB store", () => import("./kurrentdb/index.js"));
  return kurrent.createKurrentStore(options);
}
