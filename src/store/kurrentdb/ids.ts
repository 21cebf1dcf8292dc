// Sequences (reserveIds): one stream each, whose last event holds the next integer. Appends expect
// the revision read, so of two concurrent reservations one retries.
import { randomUUID } from "node:crypto";
import { BACKWARDS, END, NO_STREAM, WrongExpectedVersionError } from "@kurrent/kurrentdb-client";
import type { IdSequences } from "../port/ids.js";
import type { Kurrent } from "./client.js";

export function kurrentSequences(k: Kurrent): IdSequences {
  return {
    async reserveIds(sequence, count) {
      const kStream = k.sequenceStream(sequence);
      for (;;) {
        const [last] = await k.readStream(kStream, { direction: BACKWARDS, fromRevision: END, maxCount: 1 });
        const first = last ? (last.data as { next: number }).next : 1;
        if (count === 0) return first;
        const next = { id: randomUUID(), type: "sequence-reserved", version: 1, data: { next: first + count }, metadata: { timestamp: new Date(0).toISOString(), request_id: 0 } };
        try {
          await k.client.appendToStream(kStream, [k.toEvent(next)], { streamState: last ? BigInt(last.revision) : NO_STREAM });
          return first;
        } catch (e) {
          if (!(e instanceof WrongExpectedVersionError)) throw e;
        }
      }
    },
  };
}
