// API keys of the HTTP API: each bound to one merchant account, recorded as an ApiKeyIssued
// event on a stream named by the key's SHA-256. The key itself is never stored: it is returned
// once by issue(). SHA-256 rather than a slow password hash because keys are ~190-bit random
// tokens (nothing to guess from a dictionary), and a plain digest lets a request find its key in
// one stream read.
import { createHash } from "node:crypto";
import { streams, type DomainEvent } from "../machines/events.js";
import { chainEvents } from "./audit/chain.js";
import { isoTimestamp } from "./clock.js";
import type { Engine } from "./engine.js";

export interface ApiKeyOwner {
  key_id: string;
  external_account_id: string;
}

export const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

export function createApiKeys(engine: Pick<Engine, "store" | "ids" | "clock" | "getAccount">) {
  const { store, ids, clock } = engine;
  /** Keys seen valid in this process (keys are never revoked, so a hit stays true). */
  const known = new Map<string, ApiKeyOwner>();

  return {
    /** Issues a new key for an existing account; the returned key is shown once and never stored. */
    async issue(external_account_id: string, actor = "cli"): Promise<{ key: string } & ApiKeyOwner> {
      await engine.getAccount(external_account_id);
      const key = ids.secret("sk");
      const key_id = ids.id("key");
      const key_sha256 = sha256(key);
      const event: DomainEvent = { type: "ApiKeyIssued", version: 1, data: { key_id, external_account_id, key_sha256, issued_at: isoTimestamp(clock.now()) } };
      const metadata = { timestamp: event.data.issued_at, request_id: ids.requestId(), idempotency_key: null, actor };
      const stream = streams.apiKey(key_sha256);
      const envelope = { id: ids.uuid(), type: event.type, version: event.version, data: event.data, metadata };
      await store.append(stream, chainEvents(stream, null, [envelope]), { expectedRevision: "no_stream" });
      return { key, key_id, external_account_id };
    },

    /** The owner of a presented key, or undefined when no such key was issued. */
    async authenticate(key: string): Promise<ApiKeyOwner | undefined> {
      const digest = sha256(key);
      const cached = known.get(digest);
      if (cached) return cached;
      const [issued] = await store.readStream(streams.apiKey(digest), { maxCount: 1 });
      if (!issued || issued.type !== "ApiKeyIssued") return undefined;
      const { key_id, external_account_id } = issued.data as ApiKeyOwner;
      const owner = { key_id, external_account_id };
      known.set(digest, owner);
      return owner;
    },
  };
}

export type ApiKeys = ReturnType<typeof createApiKeys>;
