// Tamper evidence: a hash chain per stream, written on every append. Each event's metadata carries
// `prev_hash` (the hash of the event before it in its stream, null for the first) and `hash`, a
// SHA-256 over the event's
// canonical JSON (stream, id, type, version, data and metadata, prev_hash included). Revision and
// global position are left out: they belong to the store, and a stream moved to another store
// (export/import) gets new positions but keeps its hashes.
//
// What it protects against: an event edited, removed, reordered or inserted in place (by SQL on
// the database, a restored backup, a bad migration) breaks the chain and the audit's `verifyChain`
// (src/audit/chain.ts) names it.
// What it does not: the algorithm is public and there is no secret, so whoever rewrites a whole
// stream from the edited event to its end, recomputing every hash, produces a valid chain; and
// dropping the last events of a stream leaves a valid shorter chain. Anchoring each stream's head
// hash somewhere the writer cannot reach (a ledger, a signed daily digest, the processor's own
// records) turns both into detectable changes: compare `headOf` with the anchored value.
import { hash } from "node:crypto";
import { canonicalJson } from "./canonical-json.js";
import type { EventData, RecordedEvent } from "./envelope.js";

/** The hash an event should carry, computed from its content (its own `hash` field excluded). */
export function eventHash(stream: string, event: Pick<EventData, "id" | "type" | "version" | "data" | "metadata">): string {
  const { hash: _ignored, ...metadata } = event.metadata;
  return contentHash(stream, event, metadata);
}

const contentHash = (stream: string, event: Pick<EventData, "id" | "type" | "version" | "data">, metadata: EventData["metadata"]): string =>
  hash("sha256", canonicalJson({ stream, id: event.id, type: event.type, version: event.version, data: event.data, metadata }), "hex");

/** Links new events onto a stream whose last event has hash `prevHash` (null: a new stream). */
export function chainEvents(stream: string, prevHash: string | null, events: EventData[]): EventData[] {
  let prev = prevHash;
  return events.map((e) => {
    // one metadata copy per event, hashed without a hash (callers give none; a stale one is left out)
    const metadata: EventData["metadata"] = { ...e.metadata, prev_hash: prev };
    prev = metadata.hash = "hash" in metadata ? eventHash(stream, { ...e, metadata }) : contentHash(stream, e, metadata);
    return { ...e, metadata };
  });
}

export const hashOf = (e: Pick<EventData, "metadata">): string | null => (typeof e.metadata.hash === "string" ? e.metadata.hash : null);
export const prevHashOf = (e: Pick<EventData, "metadata">): string | null | undefined =>
  e.metadata.prev_hash === undefined ? undefined : (e.metadata.prev_hash as string | null);

/** The hash of the stream's last event: the value to anchor elsewhere. */
export const headOf = (events: readonly RecordedEvent[]): string | null => (events.length ? hashOf(events[events.length - 1]!) : null);
