// API keys of the HTTP API: each bound to one merchant account, recorded as events on a stream
// named by the key's SHA-256 (ApiKeyIssued, then ApiKeyRevoked or ApiKeyRotated). The key itself
// is never stored: it is returned once by issue(). SHA-256 rather than a slow password hash
// because keys are ~190-bit random tokens (nothing to guess from a dictionary), and a plain digest
// lets a request find its key in one stream read.
//
// A key's state is read from its stream and kept for at most `cacheMs` (500 ms) in each process,
// so a revoked, expired or rotated-out key answers 401 in every process within a second. When a
// key was last used is operational state, not an event: written at most once a minute per key and
// process, in the read-model store beside the keys' list (never on a payment's stream).
import { hash } from "node:crypto";
import { streams, type DomainEvent } from "../machines/events.js";
import { apiKeyKey, apiKeysProjection, type ApiKeyRecord } from "../projections/api-keys.js";
import { setBounded } from "./bounded.js";
import { isoTimestamp } from "./clock.js";
import type { Engine } from "./engine.js";
import { InvalidRequest, NotFound } from "./errors.js";
import { hashOf } from "./events/chain.js";
import { prepareOnce, type ReadModelShape } from "./store/port.js";
import { newEvents } from "./events/new-events.js";

export interface ApiKeyOwner {
  key_id: string;
  external_account_id: string;
}

/** A key as it is listed: never the key itself. */
export interface ApiKeyInfo {
  id: string;
  object: "api_key";
  external_account_id: string;
  prefix: string | null;
  created: string;
  /** When it stops working by itself (issued with an expiry, or rotated: the end of the grace), or null. */
  expires_at: string | null;
  last_used: string | null;
  status: "active" | "expired" | "revoked";
  revoked_at: string | null;
  replaced_by: string | null;
}

export interface ApiKeysOptions {
  /** How long a process trusts what it read of a key (ms): a revocation is seen within it. Default 500. */
  cacheMs?: number;
  /** Last use is recorded at most this often per key and process (ms). Default 60 s. */
  lastUsedEveryMs?: number;
  /**
   * How reads and writes wait for the read models to show every key written before them. Default:
   * the bounded wait shared with the other reads (503 read_model_behind past it), as a request
   * must; the CLI, with nobody waiting on it, catches up completely instead.
   */
  readModelsCurrent?: "bounded" | "complete";
}

// the one-shot digest: no Hash object per request (every API-key request hashes its key)
export const sha256 = (text: string) => hash("sha256", text, "hex");
const LAST_USED = "api_key_last_used";
/** Last use, a row per key in a table of its own (operational state, not events; looked up by key). */
const LAST_USED_SHAPE: ReadModelShape = { version: 2, table: { columns: {}, indexes: [], row: () => ({}) } };
const prepareLastUsed = prepareOnce(LAST_USED, LAST_USED_SHAPE);
const PREFIX_LENGTH = 8;

interface KeyState extends ApiKeyOwner {
  /** Epoch ms after which the key no longer works (expiry or the end of a rotation's grace), or null. */
  until: number | null;
  revoked: boolean;
}

type Needs = Pick<Engine, "ids" | "clock" | "store" | "readModels" | "projections" | "getAccount" | "startStream">;

export function createApiKeys(engine: Needs, { cacheMs = 500, lastUsedEveryMs = 60_000, readModelsCurrent = "bounded" }: ApiKeysOptions = {}) {
  const { ids, clock, store, readModels, projections } = engine;
  const current = () => (readModelsCurrent === "bounded" ? projections.caughtUp() : projections.catchUp());
  const states = new Map<string, { state: Promise<KeyState | undefined>; at: number }>();
  const lastRecorded = new Map<string, number>();
  /** The table, made once on this store handle before its first write or read. */
  const lastUsedReady = () => prepareLastUsed(readModels);

  /** What a key's stream says now. */
  async function stateOf(keySha256: string): Promise<KeyState | undefined> {
    const events = await store.readStream(streams.apiKey(keySha256));
    const issued = events[0];
    if (!issued || issued.type !== "ApiKeyIssued") return undefined;
    const { key_id, external_account_id, expires_at } = issued.data as { key_id: string; external_account_id: string; expires_at: string | null };
    const state: KeyState = { key_id, external_account_id, until: expires_at === null ? null : Date.parse(expires_at), revoked: false };
    for (const e of events.slice(1)) {
      if (e.type === "ApiKeyRevoked") state.revoked = true;
      if (e.type === "ApiKeyRotated") {
        const grace = Date.parse((e.data as { grace_until: string }).grace_until);
        state.until = state.until === null ? grace : Math.min(state.until, grace);
      }
    }
    return state;
  }

  async function append(record: ApiKeyRecord, event: DomainEvent, actor: string): Promise<void> {
    const stream = streams.apiKey(record.key_sha256);
    const [head] = await store.readStream(stream, { direction: "backwards", maxCount: 1 });
    const metadata = { timestamp: isoTimestamp(clock.now()), request_id: ids.requestId(), idempotency_key: null, actor };
    await store.append(stream, newEvents(stream, head ? hashOf(head) : null, [event], metadata, ids.uuid), { expectedRevision: head ? head.revision : "no_stream" });
    states.delete(record.key_sha256);
    await current();
  }

  /** A key by id, in this account when one is given (another account's key is not found, as an unknown one). */
  async function find(keyId: string, account?: string): Promise<ApiKeyRecord> {
    await current();
    const found = account === undefined ? (await readModels.list<ApiKeyRecord>(apiKeysProjection.name, "")).find((k) => k.key_id === keyId) : await readModels.get<ApiKeyRecord>(apiKeysProjection.name, apiKeyKey(account, keyId));
    // the record's own fields decide: "acct" + "x/key_1" is the key of "acct/x"'s key_1
    if (!found || found.key_id !== keyId || (account !== undefined && found.external_account_id !== account)) throw new NotFound("API key", keyId, "key_id");
    return found;
  }

  async function issue(external_account_id: string, actor = "cli", { expiresAt = null }: { expiresAt?: string | null } = {}): Promise<{ key: string } & ApiKeyOwner> {
    await engine.getAccount(external_account_id);
    if (expiresAt !== null && !(Date.parse(expiresAt) > clock.now())) throw new InvalidRequest("expires_at: must be a time in the future", "expires_at", "parameter_invalid");
    const key = ids.secret("sk");
    const key_id = ids.id("key");
    const key_sha256 = sha256(key);
    const data = { key_id, external_account_id, key_sha256, issued_at: isoTimestamp(clock.now()), prefix: key.slice(0, PREFIX_LENGTH), expires_at: expiresAt === null ? null : isoTimestamp(Date.parse(expiresAt)) };
    await engine.startStream(streams.apiKey(key_sha256), { type: "ApiKeyIssued", version: 2, data }, { actor });
    await current();
    return { key, key_id, external_account_id };
  }

  const present = (k: ApiKeyRecord, lastUsed: string | null): ApiKeyInfo => {
    const expires_at = [k.expires_at, k.grace_until].filter((t): t is string => t !== null).sort()[0] ?? null;
    const expired = expires_at !== null && Date.parse(expires_at) <= clock.now();
    return {
      id: k.key_id,
      object: "api_key",
      external_account_id: k.external_account_id,
      prefix: k.prefix,
      created: k.created,
      expires_at,
      last_used: lastUsed,
      status: k.revoked_at ? "revoked" : expired ? "expired" : "active",
      revoked_at: k.revoked_at,
      replaced_by: k.replaced_by,
    };
  };

  /** When each key was last used (recorded at most once a minute per key). */
  async function lastUsed(keyIds: string[]): Promise<Map<string, { at: string }>> {
    await lastUsedReady();
    return readModels.getMany<{ at: string }>(LAST_USED, keyIds);
  }
  /**
   * A rotated key's refusal, naming the way on: its newest replacement (a replacement rotated in
   * turn is followed) to rotate, or, that one revoked or expired, the command issuing a new key.
   */
  async function rotatedAlready(record: ApiKeyRecord, issueNew: string): Promise<InvalidRequest> {
    // a replacement is always a key issued then: the chain ends
    const chain = [await find(record.replaced_by!, record.external_account_id)];
    while (chain.at(-1)!.replaced_by) chain.push(await find(chain.at(-1)!.replaced_by!, record.external_account_id));
    const newest = chain.at(-1)!;
    const status = present(newest, null).status;
    const replaced = `replaced by ${chain.map((k) => k.key_id).join(", then by ")}${status === "active" ? "" : status === "revoked" ? ", which is revoked" : ", which has expired"}`;
    const next = status === "active" ? `rotate ${chain.length === 1 ? "that one" : newest.key_id}, or revoke ${record.key_id} to end its grace now` : issueNew;
    return new InvalidRequest(`API key ${record.key_id} was rotated already (${replaced}): ${next}`, "key_id", "api_key_rotated");
  }

  /** A key as the API shows it, its last use included. */
  const presentOne = async (k: ApiKeyRecord) => present(k, (await lastUsed([k.key_id])).get(k.key_id)?.at ?? null);

  return {
    issue,

    /** The owner of a presented key, or undefined when it was never issued, is revoked, expired or rotated out. */
    async authenticate(key: string): Promise<ApiKeyOwner | undefined> {
      const digest = sha256(key);
      const now = clock.now();
      let cached = states.get(digest);
      if (!cached || now - cached.at >= cacheMs) {
        // one read for every request of this key meanwhile (64 clients on one key read its stream once, not 64 times)
        const entry = { state: stateOf(digest), at: now };
        entry.state.catch(() => states.get(digest) === entry && states.delete(digest));
        setBounded(states, digest, (cached = entry), 10_000);
      }
      const state = await cached.state;
      if (!state || state.revoked || (state.until !== null && state.until <= now)) return undefined;
      const last = lastRecorded.get(state.key_id);
      if (last === undefined || now - last >= lastUsedEveryMs) {
        setBounded(lastRecorded, state.key_id, now, 10_000);
        // operational state, best effort: a failed write only loses a "last used" time
        void lastUsedReady()
          .then(() => readModels.commitBatch([{ projection: LAST_USED, docs: [{ key: state.key_id, doc: { at: isoTimestamp(now) } }], checkpoint: 0 }]))
          .catch(() => undefined);
      }
      return { key_id: state.key_id, external_account_id: state.external_account_id };
    },

    /** The account's keys, newest first. */
    async list(external_account_id: string): Promise<ApiKeyInfo[]> {
      await engine.getAccount(external_account_id);
      await current();
      // the key's prefix holds another account's keys too when that one's id is this one's and a "/" more
      const keys = (await readModels.list<ApiKeyRecord>(apiKeysProjection.name, `${external_account_id}/`)).filter((k) => k.external_account_id === external_account_id);
      const used = await lastUsed(keys.map((k) => k.key_id));
      return keys.map((k) => present(k, used.get(k.key_id)?.at ?? null)).sort((a, b) => (a.created < b.created ? 1 : a.created > b.created ? -1 : 0));
    },

    /** Revokes a key (of `account` when given): 401 in every process within a second. Revoking a revoked key changes nothing. */
    async revoke(keyId: string, { account, actor = "cli" }: { account?: string; actor?: string } = {}): Promise<ApiKeyInfo> {
      const record = await find(keyId, account);
      if (!record.revoked_at) await append(record, { type: "ApiKeyRevoked", version: 1, data: { key_id: keyId, external_account_id: record.external_account_id, revoked_at: isoTimestamp(clock.now()) } }, actor);
      return presentOne(await find(keyId, account));
    },

    /** Issues a key that replaces this one; the old one keeps working for `graceMs` (default 0: stops now). */
    /**
     * A new key for the key's account; the old one works for `graceMs` more. The new key's expiry:
     * `expiresAt` when given, else as far from now as the old key's was from its issue (a 90-day
     * key is replaced by a 90-day key, not by one that dies with it), else none.
     */
    async rotate(keyId: string, { graceMs = 0, expiresAt, account, actor = "cli" }: { graceMs?: number; expiresAt?: string | null; account?: string; actor?: string } = {}): Promise<{ key: string; replaced: ApiKeyInfo } & ApiKeyOwner> {
      if (!Number.isFinite(graceMs) || graceMs < 0) throw new InvalidRequest("grace: a duration of 0 or more", "grace", "parameter_invalid");
      const record = await find(keyId, account);
      const issueNew = `issue a new key for ${record.external_account_id} with: npx cardflow accounts key ${record.external_account_id}`;
      if (record.revoked_at) throw new InvalidRequest(`API key ${keyId} is revoked: ${issueNew}`, "key_id", "api_key_revoked");
      // once: a second rotation would mint another replacement and show a grace the first one already set
      if (record.replaced_by) throw await rotatedAlready(record, issueNew);
      if (present(record, null).status === "expired") throw new InvalidRequest(`API key ${keyId} has expired: ${issueNew}`, "key_id", "api_key_expired");
      const lifetime = record.expires_at === null ? null : Date.parse(record.expires_at) - Date.parse(record.created);
      const next = await issue(record.external_account_id, actor, { expiresAt: expiresAt !== undefined ? expiresAt : lifetime === null ? null : isoTimestamp(clock.now() + lifetime) });
      const now = clock.now();
      const data = { key_id: keyId, external_account_id: record.external_account_id, replaced_by: next.key_id, rotated_at: isoTimestamp(now), grace_until: isoTimestamp(now + graceMs) };
      await append(record, { type: "ApiKeyRotated", version: 1, data }, actor);
      return { ...next, replaced: await presentOne(await find(keyId, account)) };
    },
  };
}

export type ApiKeys = ReturnType<typeof createApiKeys>;

/**
 * A duration as the CLI takes it, a number and its unit: "30d", "12h", "90m", "45s" (or "500ms").
 * A bare number is refused: read as milliseconds, `--grace 30` ended a grace at once.
 */
export function parseDuration(text: string, option: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(text.trim());
  if (!match) throw new InvalidRequest(`${option}: expected a number and its unit (e.g. 30d, 12h, 90m, 45s), got ${JSON.stringify(text)}`, option.replace(/^--/, ""), "parameter_invalid");
  const unit = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2]!]!;
  const ms = Number(match[1]) * unit;
  // a key's times are RFC 3339 dates: a span past 100 years would write years a client may not parse
  if (ms > MAX_DURATION_MS) throw new InvalidRequest(`${option}: at most 100 years (36500d), got ${JSON.stringify(text)}`, option.replace(/^--/, ""), "parameter_invalid");
  return ms;
}

/** The longest duration the CLI takes: 100 years. */
const MAX_DURATION_MS = 36_500 * 86_400_000;
