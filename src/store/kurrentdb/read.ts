// Reads: a stream (forwards or backwards), and $all from a port position. $all starts at
// {commit: p, prepare: p} and events at or before p are dropped (unverified: that the server
// accepts that start when p is inside a multi-event append).
import { BACKWARDS, END, excludeSystemEvents, FORWARDS, START, streamNameFilter, type Filter, type ReadPosition } from "@kurrent/kurrentdb-client";
import type { RecordedEvent } from "../port/events.js";
import type { AllReader, StreamReader } from "../port/read.js";
import type { Kurrent } from "./client.js";

export const fromPosition = (after: number): ReadPosition => (after > 0 ? { commit: BigInt(after), prepare: BigInt(after) } : START);

/** Our streams, or those of the given prefixes, in $all. */
export const filterFor = (namespace: string, prefixes?: string[]): Filter =>
  prefixes ? streamNameFilter({ prefixes: prefixes.map((p) => namespace + p) }) : namespace ? streamNameFilter({ prefixes: [namespace] }) : excludeSystemEvents();

export function kurrentReads(k: Kurrent): StreamReader & AllReader {
  return {
    async readStream(stream, { fromRevision, direction = "forwards", maxCount } = {}) {
      return k.readStream(k.namespace + stream, {
        direction: direction === "forwards" ? FORWARDS : BACKWARDS,
        fromRevision: fromRevision !== undefined ? BigInt(fromRevision) : direction === "forwards" ? START : END,
        ...(maxCount !== undefined && { maxCount }),
      });
    },
    async head() {
      for await (const r of k.client.readAll({ direction: BACKWARDS, fromPosition: END, filter: filterFor(k.namespace) })) {
        if (r.event && k.ours(r.event.streamId)) return k.toRecorded(r.event).position;
      }
      return 0;
    },
    async readAll({ after = 0, maxCount = Number.MAX_SAFE_INTEGER } = {}) {
      const out: RecordedEvent[] = [];
      if (maxCount <= 0) return out;
      for await (const r of k.client.readAll({ fromPosition: fromPosition(after), filter: filterFor(k.namespace) })) {
        if (!r.event || !k.ours(r.event.streamId)) continue;
        const e = k.toRecorded(r.event);
        if (e.position <= after) continue;
        out.push(e);
        if (out.length >= maxCount) break;
      }
      return out;
    },
  };
}
