// Read model: API keys per merchant account, keyed `${account}/${key_id}`: what an operator or a
// merchant lists (never the key: its prefix, when it was created, expires, was revoked or rotated).
// When a key was last used is operational state, kept apart (src/api-keys.ts), not folded here.
import type { z } from "zod";
import type { ApiKeyIssued, ApiKeyRevoked, ApiKeyRotated } from "../machines/events.js";
import { defineProjection } from "./projection.js";

export interface ApiKeyRecord {
  key_id: string;
  external_account_id: string;
  key_sha256: string;
  /** The key's first characters (null for keys issued before they were recorded). */
  prefix: string | null;
  created: string;
  expires_at: string | null;
  revoked_at: string | null;
  /** Rotated: the key that replaces it; it works until grace_until. */
  replaced_by: string | null;
  grace_until: string | null;
}

export const apiKeyKey = (accountId: string, keyId: string) => `${accountId}/${keyId}`;
type Data<E extends z.ZodType> = z.infer<E> extends { data: infer D } ? D : never;

export const apiKeysProjection = defineProjection<ApiKeyRecord>({
  name: "api_keys",
  keyOf: (e) =>
    e.type === "ApiKeyIssued" || e.type === "ApiKeyRevoked" || e.type === "ApiKeyRotated"
      ? apiKeyKey((e.data as { external_account_id: string }).external_account_id, (e.data as { key_id: string }).key_id)
      : null,
  apply(doc, e) {
    switch (e.type) {
      case "ApiKeyIssued": {
        const { key_id, external_account_id, key_sha256, issued_at, prefix, expires_at } = e.data as Data<typeof ApiKeyIssued>;
        return { key_id, external_account_id, key_sha256, prefix, created: issued_at, expires_at, revoked_at: null, replaced_by: null, grace_until: null };
      }
      case "ApiKeyRevoked":
        return { ...doc!, revoked_at: (e.data as Data<typeof ApiKeyRevoked>).revoked_at };
      default: {
        const { replaced_by, grace_until } = e.data as Data<typeof ApiKeyRotated>;
        return { ...doc!, replaced_by, grace_until };
      }
    }
  },
});
