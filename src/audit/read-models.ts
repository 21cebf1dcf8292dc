// Read models against a fresh fold of the events: which are behind, which documents are missing or
// differ. What the audits compare (./audit.ts).
import { TransitionRefused, type AsAllowed } from "../../machines/fold.js";
import { paymentsProjection, type PaymentDoc } from "../../projections/payments.js";
import type { Projection } from "../../projections/projection.js";
import { PROJECTIONS } from "../../projections/registry.js";
import { createProjectionRunner, type ProjectionRunner } from "../../projections/runner.js";
import { sameJson } from "../events/canonical-json.js";
import { UnreadableDocument, UnreadableEvent, type EventStore, type ReadModelStore, type RecordedEvent, type TableShape } from "../store/port.js";
import type { Finding } from "./findings.js";
import { lastPosition } from "./source.js";

/**
 * Brings the read models up to the events, as the service does before it reads them: what an audit
 * that compares them does first (`cardflow audit`, unless --no-catch-up). An event the fold
 * refuses, or one that cannot be read, stops the catch-up there: the audit then reports it (the
 * read models it did not reach are behind, and said so) instead of ending without its findings.
 */
export async function catchUpReadModels({ store, readModels }: { store: EventStore; readModels?: ReadModelStore }, joined?: JoinedReadModels): Promise<void> {
  if (!readModels) return;
  // a joined fold's read models move together (one commit): apart, they were edited by hand, and its
  // fold would go on from state that does not match (each commit refused: caught up never)
  const together = async (names: readonly string[]) => new Set(await Promise.all(names.map((name) => readModels.checkpoint(name)))).size === 1;
  const kept = joined && (await joined.kept(readModels)) && (await together(joined.names)) ? joined : undefined;
  // read models past the events would be rebuilt (the service's answer to a restored backup): an
  // audit keeps them as they are, the evidence of events removed (readModelsAhead)
  if ((await readModelsAhead(readModels, [...PROJECTIONS.map((p) => p.name), ...(kept?.names ?? [])], await lastPosition(store))).length) return;
  // the joined fold (the webhook feed), where the store keeps it, in the same catch-up
  const catchUp = (batchSize?: number) => {
    const runner = createProjectionRunner({ store, readModels, projections: PROJECTIONS, batchSize });
    kept?.join(runner, store, readModels);
    return runner.catchUp();
  };
  const stopped = (error: unknown) => {
    if (!(error instanceof TransitionRefused || error instanceof UnreadableEvent || error instanceof UnreadableDocument)) throw error;
    return true;
  };
  // a batch holding the event is not committed: one event at a time from there, up to the event
  if (await catchUp().then(() => false, stopped)) await catchUp(1).catch(stopped);
}

/**
 * Read models of a fold that joins the projections' catch-up (the webhook feed: the audit sits
 * below it, so its callers hand it in, src/webhooks/feed-audit.ts), compared like the projections'
 * where the store keeps them. Each of its documents is one stream's.
 */
export interface JoinedReadModels {
  names: readonly string[];
  /** The store keeps them (a service that runs the fold wrote them). */
  kept(readModels: ReadModelStore): Promise<boolean>;
  /** Its tables, whose stored columns (what its reads select on) are compared too. */
  tables: readonly { name: string; table?: TableShape<any> }[];
  /** Fresh documents of one stream's events, by read model and key (an event only an earlier machine allowed folded as it did: `asAllowed`). */
  foldStream(events: readonly RecordedEvent[], asAllowed?: AsAllowed): Map<string, Map<string, unknown>>;
  /** Joins the fold to a catch-up of the projections. */
  join(runner: ProjectionRunner, store: EventStore, readModels: ReadModelStore): void;
}

/** The projection's document after the event, a payment's state folded as the audit allowed it (`asAllowed`, where today's fold refuses). */
export function applyAsAllowed(p: Projection<any>, doc: unknown, e: RecordedEvent, asAllowed?: AsAllowed): unknown {
  const state = asAllowed?.get(e.position);
  if (state && p.name === paymentsProjection.name) return { state, request_id: e.metadata.request_id } satisfies PaymentDoc;
  return p.apply(doc, e);
}

/** Fresh documents of every projection from these events (in global order), events only an earlier machine allowed folded as it did (`asAllowed`). */
export function foldProjections(events: Iterable<RecordedEvent>, projections: readonly Projection<any>[] = PROJECTIONS, asAllowed?: AsAllowed): Map<string, Map<string, unknown>> {
  const docs = new Map(projections.map((p) => [p.name, new Map<string, unknown>()]));
  for (const e of events) {
    for (const p of projections) {
      const key = p.keyOf(e);
      if (key === null) continue;
      const byKey = docs.get(p.name)!;
      byKey.set(key, applyAsAllowed(p, byKey.get(key), e, asAllowed));
    }
  }
  return docs;
}

/** Read models whose checkpoint is past the store's `lastPosition`: events they folded are no longer stored. */
export async function readModelsAhead(readModels: ReadModelStore, names: Iterable<string>, lastPosition: number): Promise<Finding[]> {
  const findings: Finding[] = [];
  for (const name of names) {
    const checkpoint = await readModels.checkpoint(name);
    if (checkpoint > lastPosition) {
      findings.push({ kind: "read_model_ahead", subject: `read_model:${name}`, message: `read model ${name} is at position ${checkpoint}, past the events' last (${lastPosition}): events it folded are no longer stored (removed, or the store restored from an older backup)` });
    }
  }
  return findings;
}

/** Read models whose checkpoint is behind `lastPosition` (catch them up first: the projection runner's catchUp). */
export async function readModelsBehind(readModels: ReadModelStore, names: Iterable<string>, lastPosition: number): Promise<Finding[]> {
  const findings: Finding[] = [];
  for (const name of names) {
    const checkpoint = await readModels.checkpoint(name);
    if (checkpoint < lastPosition) findings.push({ kind: "read_model_behind", subject: `read_model:${name}`, message: `read model ${name} is at position ${checkpoint}, the events reach ${lastPosition}` });
  }
  return findings;
}

/**
 * Stored read-model documents against fresh ones (one read per projection), and a table read model's
 * stored columns (what its lists select on) against its row() of the fresh document, where the store
 * offers them (ReadModelStore.columns).
 */
export async function compareDocuments(readModels: ReadModelStore, fresh: Map<string, Map<string, unknown>>, projections: readonly { name: string; table?: TableShape<any> }[] = PROJECTIONS): Promise<Finding[]> {
  const findings: Finding[] = [];
  for (const [name, docs] of fresh) {
    if (docs.size === 0) continue;
    const subject = `read_model:${name}`;
    const { stored, unreadable } = await readableDocuments(readModels, name, [...docs.keys()]);
    for (const [key, doc] of docs) {
      const found = stored.get(key);
      if (unreadable.has(key)) findings.push({ kind: "read_model_mismatch", subject, message: unreadable.get(key)! });
      else if (found === undefined) findings.push({ kind: "read_model_missing", subject, message: `read model ${name} has no document ${key}` });
      else if (!sameJson(found, doc)) findings.push({ kind: "read_model_mismatch", subject, message: `read model ${name}: document ${key} differs from a fresh replay of its events` });
    }
    const table = projections.find((p) => p.name === name)?.table;
    if (!table || !readModels.columns) continue;
    const columns = await readModels.columns(name, [...stored.keys()]); // an unreadable one was reported
    for (const [key, row] of columns) {
      const expected = table.row(docs.get(key));
      for (const column of Object.keys(table.columns)) {
        const [was, is] = [row[column] ?? null, expected[column] ?? null];
        if (was !== is) findings.push({ kind: "read_model_mismatch", subject, message: `read model ${name}: document ${key}'s column ${column} is ${JSON.stringify(was)}, a fresh replay of its events gives ${JSON.stringify(is)} (its lists select on it)` });
      }
    }
  }
  return findings;
}

/**
 * The stored documents among `keys`, in one read; when one is not JSON (edited in the database),
 * one key at a time: each unreadable one is told (its message), the others compared as usual.
 */
async function readableDocuments(readModels: ReadModelStore, name: string, keys: string[]): Promise<{ stored: Map<string, unknown>; unreadable: Map<string, string> }> {
  const unreadable = new Map<string, string>();
  try {
    return { stored: await readModels.getMany(name, keys), unreadable };
  } catch (error) {
    if (!(error instanceof UnreadableDocument)) throw error;
  }
  const stored = new Map<string, unknown>();
  for (const key of keys) {
    try {
      const doc = (await readModels.getMany(name, [key])).get(key);
      if (doc !== undefined) stored.set(key, doc);
    } catch (error) {
      if (!(error instanceof UnreadableDocument)) throw error;
      unreadable.set(key, error.message);
    }
  }
  return { stored, unreadable };
}

export const readModelVerdict = (compared: boolean, findings: Finding[]) =>
  !compared ? "not_compared" : findings.some((f) => f.subject.startsWith("read_model:")) ? "differ" : "equal";
