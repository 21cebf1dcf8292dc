// API keys of the HTTP API: each bound to one merchant account, recorded as an ApiKeyIssued
// event on a stream named by the key's SHA-256. The key itself is never stored: it is returned
// once by issue(). SHA-256 rather than a slow password hash because keys are ~190-bit random
// tokens (nothing to guess from a dictionary), and a plain digest lets a request find its key in
// one stream read.
import { hash } from "node:crypto";
import { streams, type DomainEvent } from "../machines/events.js";
import { isoTimestamp } from "./clock.js";
import type { Engine } from "./engine.js";

export interface ApiKeyOwner {
  key_id: string;
  external_account_id: string;
}

// the one-shot digest: no Hash object per request (every API-key request hashes its key)
export const sha256 = (text: string) => hash("sha256", text, "hex");

export function createApiKeys(engine: Pick<Engine, "ids" | "clock" | "getAccount" | "startStream" | "firstEvent">) {
  const { ids, clock } = engine;

  return {
    /** Issues a new key for an existing account; the returned key is shown once and never stored. */
    async issue(external_account_id: string, actor = "cli"): Promise<{ key: string } & ApiKeyOwner> {
      await engine.getAccount(external_account_id);
      const key = ids.secret("sk");
      const key_id = ids.id("key");
      const key_sha256 = sha256(key);
      const event: DomainEvent = { type: "ApiKeyIssued", version: 1, data: { key_id, external_account_id, key_sha256, issued_at: isoTimestamp(clock.now()) } };
      await engine.startStream(streams.apiKey(key_sha256), event, { actor });
      return { key, key_id, external_account_id };
    },

    /** The owner of a presented key, or undefined when no such key was issued. */
    async authenticate(key: string): Promise<ApiKeyOwner | undefined> {
      // keys are never revoked, so the engine's cache of first events may keep a hit
      const issued = await engine.firstEvent(streams.apiKey(sha256(key)));
      if (!issued || issued.type !== "ApiKeyIssued") return undefined;
      const { key_id, external_account_id } = issued.data as ApiKeyOwner;
      return { key_id, external_account_id };
    },
  };
}

export type ApiKeys = ReturnType<typeof createApiKeys>;
