// The webhook signature: `Cardflow-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`.
// The timestamp is signed with the body, so a captured request cannot be replayed later than the
// receiver's tolerance. Several v1 entries may appear (a receiver accepts any that matches).
import { createHmac, timingSafeEqual } from "node:crypto";

export const SIGNATURE_HEADER = "Cardflow-Signature";

const hmac = (secret: string, t: number, body: string | Buffer) => createHmac("sha256", secret).update(`${t}.`).update(body).digest("hex");

/** The header value for a body sent at `nowMs`. */
export function signatureHeader(secret: string, rawBody: string | Buffer, nowMs: number): string {
  const t = Math.floor(nowMs / 1000);
  return `t=${t},v1=${hmac(secret, t, rawBody)}`;
}

export interface VerifyOptions {
  /** How old (or early) the signed timestamp may be; default 300 s. */
  toleranceSeconds?: number;
  /** Now, in epoch ms (tests); default the system clock. */
  now?: number;
}

/**
 * True when the header signs exactly this raw body (the bytes received, before any JSON parsing)
 * with the endpoint's secret, at a time within the tolerance. A call that could only ever pass by
 * mistake throws instead: an empty secret (anyone can sign with it) or a tolerance that is not a
 * finite number of seconds >= 0 (NaN or Infinity would accept any timestamp).
 */
export function verifyWebhook(rawBody: string | Buffer, header: string | null | undefined, secret: string, { toleranceSeconds = 300, now = Date.now() }: VerifyOptions = {}): boolean {
  if (typeof secret !== "string" || secret.length === 0) throw new TypeError("verifyWebhook: the endpoint's secret is empty; pass the whsec_… secret shown when the endpoint was created");
  if (typeof toleranceSeconds !== "number" || !Number.isFinite(toleranceSeconds) || toleranceSeconds < 0) {
    throw new RangeError(`verifyWebhook: toleranceSeconds must be a finite number >= 0, got ${String(toleranceSeconds)}`);
  }
  if (!Number.isFinite(now)) throw new RangeError(`verifyWebhook: now must be a finite time in ms, got ${String(now)}`);
  if (!header) return false;
  const parts = header.split(",").map((p) => p.trim().split("="));
  const t = Number(parts.find(([k]) => k === "t")?.[1]);
  // in whole seconds, as `t` is written: a tolerance of 0 takes a signature of this very second
  if (!Number.isInteger(t) || Math.abs(Math.floor(now / 1000) - t) > toleranceSeconds) return false;
  const expected = Buffer.from(hmac(secret, t, rawBody), "hex");
  return parts.some(([k, v]) => k === "v1" && v !== undefined && /^[0-9a-f]{64}$/.test(v) && timingSafeEqual(Buffer.from(v, "hex"), expected));
}
