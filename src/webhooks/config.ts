// Webhook settings from the environment (`npm start`), and the signing key every endpoint's
// secret is derived from: WEBHOOK_SIGNING_KEY (hex, 32 bytes or more), else a key file created
// once beside the store (DATA_DIR/webhook-signing.key, mode 0600), shared by every process on
// that data directory. Losing the key loses the endpoints' secrets (create new endpoints).
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, linkSync, readFileSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigurationError, envNumber, makeDataDirectory, MAX_TIMER_MS } from "../config.js";
import type { Backoff } from "./delivery.js";

/** Whether loopback and private receiver addresses are allowed comes from the service's SANDBOX (src/config.ts). */
export interface WebhookConfig {
  backoff: Backoff;
  leaseMs: number;
  timeoutMs: number;
  /** WEBHOOK_MAX_ENDPOINTS_PER_ACCOUNT: endpoints one account may have (default 16). */
  maxEndpointsPerAccount: number;
  /** WEBHOOK_ACCOUNT_CONCURRENCY: posts in flight at once for one account's endpoints, per process (default 16). */
  accountConcurrency: number;
}

/** Milliseconds a timer holds (Node runs a longer one at once: a timeout past it gave up at once). */
const ms = (env: NodeJS.ProcessEnv, name: string, fallback: number) =>
  envNumber(env, name, fallback, { min: 1, max: MAX_TIMER_MS, integer: true, expected: `whole milliseconds from 1 to ${MAX_TIMER_MS}` });
/** A count of endpoints or posts: half a post means nothing. */
const count = (env: NodeJS.ProcessEnv, name: string, fallback: number) => envNumber(env, name, fallback, { min: 1, integer: true, expected: "a whole number, 1 or more" });

export function webhookConfigFromEnv(env: NodeJS.ProcessEnv = process.env): WebhookConfig {
  const hours = envNumber(env, "WEBHOOK_RETRY_HORIZON_HOURS", 72, { integer: false, expected: "a positive number of hours" });
  if (hours <= 0) throw new ConfigurationError(`WEBHOOK_RETRY_HORIZON_HOURS: expected a positive number of hours, got ${JSON.stringify(env.WEBHOOK_RETRY_HORIZON_HOURS)}`);
  return {
    backoff: {
      baseMs: ms(env, "WEBHOOK_RETRY_BASE_MS", 5_000),
      maxMs: ms(env, "WEBHOOK_RETRY_MAX_MS", 3_600_000),
      horizonMs: hours * 3_600_000,
    },
    leaseMs: ms(env, "WEBHOOK_LEASE_MS", 30_000),
    timeoutMs: ms(env, "WEBHOOK_TIMEOUT_MS", 10_000),
    maxEndpointsPerAccount: count(env, "WEBHOOK_MAX_ENDPOINTS_PER_ACCOUNT", 16),
    accountConcurrency: count(env, "WEBHOOK_ACCOUNT_CONCURRENCY", 16),
  };
}

const KEY_HEX = /^([0-9a-f]{2}){32,}$/i;

/** WEBHOOK_SIGNING_KEY when set (null: the data directory's key file), refused unless it is hex of 32 bytes or more. */
export function configuredSigningKey(env: NodeJS.ProcessEnv = process.env): Buffer | null {
  const configured = env.WEBHOOK_SIGNING_KEY;
  if (!configured) return null;
  if (!KEY_HEX.test(configured)) throw new ConfigurationError("WEBHOOK_SIGNING_KEY: expected at least 32 bytes as hex (64 hex digits or more), e.g. from: openssl rand -hex 32");
  return Buffer.from(configured, "hex");
}

/**
 * The signing key: WEBHOOK_SIGNING_KEY, else `<DATA_DIR>/webhook-signing.key`, made on first start.
 * Every process on the data directory must hold the same key (it also seals Idempotency-Key
 * answers that another process replays), so the file appears whole or not at all: written under a
 * name of this process's own, then linked to its name, which fails if another process's is there.
 * (Creating it with O_EXCL and writing after let a second process read it empty in between.)
 */
export function loadSigningKey(dataDir: string, env: NodeJS.ProcessEnv = process.env): Buffer {
  const configured = configuredSigningKey(env);
  if (configured) return configured;
  const path = join(dataDir, "webhook-signing.key");
  makeDataDirectory(dataDir);
  if (!existsSync(path)) {
    const mine = `${path}.${process.pid}.${randomBytes(4).toString("hex")}`;
    writeFileSync(mine, randomBytes(32).toString("hex") + "\n", { flag: "wx", mode: 0o600, flush: true });
    try {
      linkSync(mine, path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    } finally {
      unlinkSync(mine);
    }
  }
  // a copy or a restore that lost the file's mode: the key is a secret (README: Data files)
  if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600);
  const hex = readFileSync(path, "utf8").trim();
  if (!KEY_HEX.test(hex)) throw new ConfigurationError(`${path}: expected at least 32 bytes as hex; remove the file to make a new key (webhook receivers must then be given the new one) or set WEBHOOK_SIGNING_KEY`);
  return Buffer.from(hex, "hex");
}
