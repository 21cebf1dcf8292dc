// Anchors: stream head hashes kept outside the store. A stream that no longer holds its anchored
// head was truncated or rewritten since (what the hash chain alone cannot show).
import type { RecordedEvent } from "../store/port.js";
import type { Anchors, Finding } from "./findings.js";
import { batchesOf, type AuditSource } from "./source.js";

/**
 * An anchored head must still be in its stream's chain (streams only grow): when it is not, the
 * stream was truncated or rewritten since, which the chain alone cannot show. `cut`: streams read
 * only up to an event that cannot be read, whose head past it cannot be looked for.
 */
export function checkAnchors(byStream: ReadonlyMap<string, readonly RecordedEvent[]>, anchors: Anchors, cut: ReadonlySet<string> = new Set()): Finding[] {
  const findings: Finding[] = [];
  for (const [stream, hash] of Object.entries(anchors)) {
    const events = byStream.get(stream) ?? [];
    if (!events.some((e) => e.metadata.hash === hash)) {
      const message = cut.has(stream)
        ? `${stream}: its anchored head ${hash.slice(0, 12)}… cannot be looked for past an event that cannot be read (above)`
        : events.length === 0
          ? `${stream} is not in the store, though anchored at head ${hash.slice(0, 12)}…: deleted since it was anchored (or the heads are another store's)`
          : `${stream} no longer holds its anchored head ${hash.slice(0, 12)}…: truncated or rewritten since it was anchored`;
      findings.push({ kind: "anchor_missing", subject: stream, message });
    }
  }
  return findings;
}

/** Every stream's head hash: the values to keep outside the store (`auditAll({ anchors })`). */
export async function streamHeads(store: AuditSource["store"]): Promise<Anchors> {
  const heads: Anchors = {};
  for await (const batch of batchesOf(store)) for (const e of batch) if (typeof e.metadata.hash === "string") heads[e.stream] = e.metadata.hash;
  return heads;
}
