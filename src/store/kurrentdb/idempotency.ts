// Idempotency records: stream `namespace + "_idempotency-" + key`, whose last event is the record.
// A claim, and the answer replacing it, is an append expecting the revision of the record read: the
// stream's optimistic check plays the unique key. An append with a record writes it in the same
// atomic multiStreamAppend as the events (./append.ts; KurrentDB 25.1 or later).
import { randomUUID } from "node:crypto";
import { BACKWARDS, END, streamNameFilter, WrongExpectedVersionError } from "@kurrent/kurrentdb-client";
import { holdsKey, type IdempotencyRecord, type IdempotencyStore } from "../port/idempotency.js";
import type { Kurrent } from "./client.js";

export function kurrentIdempotency(k: Kurrent) {
  const { client, idemStream, idemPrefix } = k;

  /** The key's current record (the last event of its stream) and that event's revision. */
  async function lastIdempotency(key: string): Promise<{ record: IdempotencyRecord; revision: bigint } | undefined> {
    const [last] = await k.readStream(idemStream(key), { direction: BACKWARDS, fromRevision: END, maxCount: 1 });
    return last && { record: last.data as IdempotencyRecord, revision: BigInt(last.revision) };
  }

  function idempotencyEvent(record: IdempotencyRecord) {
    return k.toEvent({ id: randomUUID(), type: "idempotency-record", version: 1, data: record, metadata: { timestamp: record.expires_at, request_id: 0 } });
  }

  /** false when the stream is no longer at `expected` (another writer came first). */
  async function writeIdempotency(record: IdempotencyRecord, expected: bigint | "no_stream"): Promise<boolean> {
    try {
      await client.appendToStream(idemStream(record.key), [idempotencyEvent(record)], { streamState: expected });
      return true;
    } catch (e) {
      if (e instanceof WrongExpectedVersionError) return false;
      throw e;
    }
  }

  // Each write names the revision of the record it read: of two concurrent writers one wins.
  const store: IdempotencyStore = {
    async claimIdempotency(claim, now) {
      for (;;) {
        const held = await lastIdempotency(claim.key);
        if (held && holdsKey(held.record, now)) return held.record;
        if (await writeIdempotency(claim, held ? held.revision : "no_stream")) return undefined;
      }
    },
    async saveIdempotency(record) {
      for (;;) {
        const held = await lastIdempotency(record.key);
        if (held?.record.token !== record.token) return false;
        if (await writeIdempotency(record, held.revision)) return true;
      }
    },
    async releaseIdempotency(key, token, expires_at) {
      for (;;) {
        const held = await lastIdempotency(key);
        if (held?.record.token !== token || held.record.state !== "in_flight") return;
        if (held.record.status === 0) {
          await client.deleteStream(idemStream(key), { expectedRevision: held.revision }).catch((e) => {
            if (!(e instanceof WrongExpectedVersionError)) throw e;
          });
          return;
        }
        if (await writeIdempotency({ ...held.record, state: "done", expires_at }, held.revision)) return;
      }
    },
    async readIdempotency(key) {
      return (await lastIdempotency(key))?.record;
    },
    async purgeIdempotency(now) {
      // Reads every idempotency stream once: fine for housekeeping, not for a hot path.
      const keys = new Set<string>();
      for await (const r of client.readAll({ filter: streamNameFilter({ prefixes: [idemPrefix] }) })) {
        if (r.event) keys.add(r.event.streamId.slice(idemPrefix.length));
      }
      let purged = 0;
      for (const key of keys) {
        const record = (await lastIdempotency(key))?.record;
        if (record && !holdsKey(record, now)) {
          await client.deleteStream(idemStream(key));
          purged++;
        }
      }
      return purged;
    },
  };
  return { store, lastIdempotency, idempotencyEvent };
}
