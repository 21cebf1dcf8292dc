// What the SQL adapters (SQLite, PostgreSQL) share: event rows to RecordedEvent (JSON kept as text
// so it reads back byte for byte), readStream options to bounds, and one connection shared by the
// two ports they return.
import { upcast } from "../../machines/event-versions.js";
import { UnreadableEvent, type ReadStreamOptions, type RecordedEvent } from "./port.js";

/** A PostgreSQL schema cardflow takes (an identifier it never needs to quote), and the rule in words for messages. */
// pg_ names are PostgreSQL's own (CREATE SCHEMA refuses them)
export const SCHEMA_NAME = /^(?!pg_)[a-z_][a-z0-9_]{0,62}$/;
export const SCHEMA_RULE = "lower-case letters, digits and _, starting with a letter or _ but not pg_, at most 63 characters";

export interface EventRow {
  /** bigint columns arrive as strings from PostgreSQL. */
  position: number | string;
  revision: number | string;
  stream: string;
  id: string;
  type: string;
  version: number;
  data: string;
  metadata: string;
}

/** A stored row as an event, upcast to its type's current schema version (machines/event-versions.ts). */
export function toRecorded(r: EventRow): RecordedEvent {
  const [stream, revision, position] = [r.stream, Number(r.revision), Number(r.position)];
  const parse = (field: "data" | "metadata") => {
    try {
      return JSON.parse(r[field]) as never;
    } catch (error) {
      throw new UnreadableEvent({ stream, revision, position, id: r.id }, field, error);
    }
  };
  return upcast({ id: r.id, type: r.type, version: r.version, data: parse("data"), metadata: parse("metadata"), stream, revision, position });
}

/** readStream options as a query's bounds: forwards from `from` up, or backwards from `from` down. */
export function streamRange({ fromRevision, direction = "forwards", maxCount = Number.MAX_SAFE_INTEGER }: ReadStreamOptions = {}) {
  const forwards = direction === "forwards";
  return { forwards, from: fromRevision ?? (forwards ? 0 : Number.MAX_SAFE_INTEGER), maxCount };
}

/**
 * One connection behind two ports: each port's close() releases it once (later calls are no-ops)
 * and the last release closes it. Call the returned function once per port to get its close().
 */
export function sharedConnection(close: () => void | Promise<void>) {
  let users = 2;
  let closed: Promise<void> | undefined;
  return (beforeRelease: () => void | Promise<void> = () => undefined) => {
    let released = false;
    return async () => {
      if (released) return;
      released = true;
      await beforeRelease();
      if (--users === 0) closed = Promise.resolve(close());
      await closed;
    };
  };
}

/** SQL for "the idempotency record no longer holds its key at `now`": the negation of holdsKey (port.ts). */
export const RELEASED_SQL = (table: string, now: string) => `${table}.expires_at < ${now} AND (${table}.state = 'done' OR ${table}.status = 0)`;
/** keepsKey (./port/idempotency.ts) in SQL: answered and not expired, or in flight with an effect. */
export const KEEPS_KEY_SQL = (table: string, now: string) => `((${table}.state = 'done' AND ${table}.expires_at >= ${now}) OR (${table}.state = 'in_flight' AND ${table}.status <> 0))`;

/**
 * The first string after every string that starts with `prefix` (its last character moved up by
 * one): `key >= prefix AND key < prefixEnd(prefix)` is the prefix's range of an index, so a listing
 * stops at the prefix's end instead of reading on through the keys after it.
 */
export const prefixEnd = (prefix: string) => prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
