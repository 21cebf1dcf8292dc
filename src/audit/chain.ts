// Tamper evidence: a hash chain per stream. Each event's metadata carries `prev_hash` (the hash of
// the event before it in its stream, null for the first) and `hash`, a SHA-256 over the event's
// canonical JSON (stream, id, type, version, data and metadata, prev_hash included). Revision and
// global position are left out: they belong to the store, and a stream moved to another store
// (export/import) gets new positions but keeps its hashes.
//
// What it protects against: an event edited, removed, reordered or inserted in place (by SQL on
// the database, a restored backup, a bad migration) breaks the chain and `verifyChain` names it.
// What it does not: the algorithm is public and there is no secret, so whoever rewrites a whole
// stream from the edited event to its end, recomputing every hash, produces a valid chain; and
// dropping the last events of a stream leaves a valid shorter chain. Anchoring each stream's head
// hash somewhere the writer cannot reach (a ledger, a signed daily digest, the processor's own
// records) turns both into detectable changes: compare `headOf` with the anchored value.
import { hash } from "node:crypto";
import type { EventData, RecordedEvent } from "../store/port.js";

/** JSON.stringify of object keys, kept for the keys events use over and over (bounded). */
const quotedKeys = new Map<string, string>();
function quoteKey(key: string): string {
  let quoted = quotedKeys.get(key);
  if (quoted === undefined) {
    quoted = JSON.stringify(key);
    if (quotedKeys.size < 2_000) quotedKeys.set(key, quoted);
  }
  return quoted;
}

/** Characters JSON.stringify escapes in a string (lone surrogates included): the rest is copied as is. */
const ESCAPED = /["\\\u0000-\u001f\ud800-\udfff]/;

/** JSON with object keys sorted at every level, no whitespace: equal values hash equally. */
export function canonicalJson(value: unknown): string {
  // string concatenation, no intermediate arrays, and most strings quoted without a call into
  // JSON.stringify: this runs for every event appended (eventHash)
  switch (typeof value) {
    case "string":
      return ESCAPED.test(value) ? JSON.stringify(value) : `"${value}"`;
    case "object":
      break;
    default:
      return JSON.stringify(value) ?? "null";
  }
  if (value === null) return "null";
  if (typeof (value as { toJSON?: unknown }).toJSON === "function") return canonicalJson((value as { toJSON(): unknown }).toJSON());
  if (Array.isArray(value)) {
    let out = "[";
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      if (i > 0) out += ",";
      out += v === undefined || typeof v === "function" ? "null" : canonicalJson(v);
    }
    return out + "]";
  }
  const keys = Object.keys(value).sort();
  let out = "{";
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const v = (value as Record<string, unknown>)[key];
    if (v === undefined || typeof v === "function") continue;
    if (out.length > 1) out += ",";
    out += quoteKey(key);
    out += ":";
    out += canonicalJson(v);
  }
  return out + "}";
}

/** Equal as JSON values (key order aside); the plain serialization first, it usually settles it. */
export const sameJson = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b) || canonicalJson(a) === canonicalJson(b);

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

export type ChainFindingKind = "edited" | "removed" | "reordered" | "inserted" | "revision_gap";

export interface ChainFinding {
  kind: ChainFindingKind;
  stream: string;
  /** The event named by the finding (for `removed`: the event whose predecessor is missing). */
  event_id: string;
  revision: number;
  type: string;
  message: string;
}

const describe = (e: RecordedEvent) => `${e.type} ${e.id} (${e.stream}@${e.revision})`;

/**
 * Verifies one stream's chain and names what broke it. The chain the events' links describe is
 * rebuilt first (from the first event, following prev_hash, the longest branch winning); then:
 * - edited: the event's content no longer matches its own hash;
 * - removed: an event's prev_hash names no stored event (the predecessor is gone, or was edited
 *   and re-hashed, which leaves the same trace);
 * - inserted: an event that carries no hash, or one off the linked chain (a second first event, a
 *   branch, a duplicate);
 * - reordered: linked events stored in another order than their links say;
 * - revision_gap: with an intact chain, revisions that do not run 0, 1, 2, ... (store damage).
 */
export function verifyChain(events: readonly RecordedEvent[]): ChainFinding[] {
  const findings: ChainFinding[] = [];
  const finding = (kind: ChainFindingKind, e: RecordedEvent, message: string) =>
    findings.push({ kind, stream: e.stream, event_id: e.id, revision: e.revision, type: e.type, message });

  const byHash = new Map<string, number>();
  const linked: number[] = [];
  events.forEach((e, i) => {
    const hash = hashOf(e);
    if (hash === null || prevHashOf(e) === undefined) return void finding("inserted", e, `${describe(e)} carries no hash chain: it was not appended by cardflow`);
    if (eventHash(e.stream, e) !== hash) finding("edited", e, `${describe(e)} was edited: its content does not match its hash`);
    if (byHash.has(hash)) return void finding("inserted", e, `${describe(e)} duplicates ${describe(events[byHash.get(hash)!]!)}`);
    byHash.set(hash, i);
    linked.push(i);
  });

  // children by parent; roots are first events (prev null) and events whose predecessor is gone
  const children = new Map<number, number[]>();
  const geneses: number[] = [];
  const orphans: number[] = [];
  for (const i of linked) {
    const prev = prevHashOf(events[i]!)!;
    if (prev === null) geneses.push(i);
    else if (byHash.has(prev)) children.set(byHash.get(prev)!, [...(children.get(byHash.get(prev)!) ?? []), i]);
    else orphans.push(i);
  }
  const longest = new Map<number, number[]>();
  const pathFrom = (i: number): number[] => {
    const known = longest.get(i);
    if (known) return known;
    longest.set(i, [i]); // guards against cycles (hash collisions aside, impossible)
    let best: number[] = [];
    // ties: the later-stored branch is the original (an insertion sits before the event it displaced)
    for (const c of children.get(i) ?? []) if (pathFrom(c).length >= best.length) best = pathFrom(c);
    const path = [i, ...best];
    longest.set(i, path);
    return path;
  };
  const bestGenesis = geneses.reduce<number | undefined>((b, g) => (b === undefined || pathFrom(g).length > pathFrom(b).length ? g : b), undefined);
  const roots = [...(bestGenesis === undefined ? [] : [bestGenesis]), ...orphans].sort((a, b) => a - b);
  const chain: number[] = [];
  const onChain = new Set<number>();
  for (const r of roots) {
    if (onChain.has(r)) continue;
    for (const i of pathFrom(r)) if (!onChain.has(i)) (chain.push(i), onChain.add(i));
  }
  for (const o of orphans) {
    const e = events[o]!;
    finding("removed", e, `the event before ${describe(e)} is missing (hash ${prevHashOf(e)!.slice(0, 12)}…): removed, or edited and re-hashed`);
  }
  for (const i of linked) if (!onChain.has(i)) finding("inserted", events[i]!, `${describe(events[i]!)} is not part of the stream's chain: inserted`);

  // stored order against linked order: events outside a longest run in linked order moved
  const rank = new Map(chain.map((i, k) => [i, k]));
  const stored = linked.filter((i) => onChain.has(i));
  for (const i of movedOf(stored.map((i) => rank.get(i)!)).map((k) => stored[k]!)) {
    const k = rank.get(i)!;
    const after = k > 0 ? ` (appended right after ${describe(events[chain[k - 1]!]!)})` : " (appended first)";
    finding("reordered", events[i]!, `${describe(events[i]!)} is stored out of order${after}`);
  }

  if (findings.length === 0) {
    events.forEach((e, i) => {
      if (e.revision !== i) finding("revision_gap", e, `${describe(e)} has revision ${e.revision}, expected ${i}`);
    });
  }
  return findings;
}

/** Indexes of the sequence not in one longest increasing subsequence: the elements that moved. */
function movedOf(seq: number[]): number[] {
  if (seq.every((v, i) => i === 0 || seq[i - 1]! < v)) return [];
  const n = seq.length;
  const len = new Array<number>(n).fill(1);
  const prev = new Array<number>(n).fill(-1);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < i; j++) if (seq[j]! < seq[i]! && len[j]! + 1 > len[i]!) (len[i] = len[j]! + 1), (prev[i] = j);
  }
  let end = -1;
  for (let i = 0; i < n; i++) if (end < 0 || len[i]! >= len[end]!) end = i;
  const keep = new Set<number>();
  for (let i = end; i >= 0; i = prev[i]!) keep.add(i);
  return seq.map((_, i) => i).filter((i) => !keep.has(i));
}
