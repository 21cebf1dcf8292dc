// Canonical JSON: object keys sorted at every level, no whitespace, so equal values serialize (and
// hash) equally. The hash chain (./chain.ts) hashes it; Idempotency-Key fingerprints and audits
// compare with it.
/** JSON.stringify of object keys, kept for the keys events use over and over (bounded). */
const quotedKeys = new Map<string, string>();
function quoteKey(key: string): string {
  let quoted = quotedKeys.get(key);
  if (quoted === undefined) {
    quoted = JSON.stringify(key);
    if (quotedKeys.size < 2_000) quotedKeys.set(key, quoted);
  }
  return quoted;
}

/** Characters JSON.stringify escapes in a string (lone surrogates included): the rest is copied as is. */
const ESCAPED = /["\\\u0000-\u001f\ud800-\udfff]/;

/** JSON with object keys sorted at every level, no whitespace: equal values hash equally. */
export function canonicalJson(value: unknown): string {
  // string concatenation, no intermediate arrays, and most strings quoted without a call into
  // JSON.stringify: this runs for every event appended (eventHash)
  switch (typeof value) {
    case "string":
      return ESCAPED.test(value) ? JSON.stringify(value) : `"${value}"`;
    case "object":
      break;
    default:
      return JSON.stringify(value) ?? "null";
  }
  if (value === null) return "null";
  if (typeof (value as { toJSON?: unknown }).toJSON === "function") return canonicalJson((value as { toJSON(): unknown }).toJSON());
  if (Array.isArray(value)) {
    let out = "[";
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      if (i > 0) out += ",";
      out += v === undefined || typeof v === "function" ? "null" : canonicalJson(v);
    }
    return out + "]";
  }
  const keys = Object.keys(value).sort();
  let out = "{";
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const v = (value as Record<string, unknown>)[key];
    if (v === undefined || typeof v === "function") continue;
    if (out.length > 1) out += ",";
    out += quoteKey(key);
    out += ":";
    out += canonicalJson(v);
  }
  return out + "}";
}

/** Equal as JSON values (key order aside); the plain serialization first, it usually settles it. */
export const sameJson = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b) || canonicalJson(a) === canonicalJson(b);
