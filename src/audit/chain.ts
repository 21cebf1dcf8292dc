// Verifying the hash chain of a stream (src/events/chain.ts writes it on every append): what broke
// it, named. What the chain protects against, and what it does not, is said there. Hashes cover
// the stored bytes: an event read at its current schema version is hashed in its stored form
// (machines/event-versions.ts), so the chain verifies over upcast streams.
import { storedFormOf } from "../../machines/event-versions.js";
import { eventHash, hashOf, prevHashOf } from "../events/chain.js";
import type { RecordedEvent } from "../events/envelope.js";

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
    if (eventHash(e.stream, storedFormOf(e)) !== hash) finding("edited", e, `${describe(e)} was edited: its content does not match its hash`);
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
