// Request bodies are JSON in UTF-8, read as sent. Fastify's own parser decodes any bytes as UTF-8
// (an invalid byte becomes U+FFFD: a merchant's reference silently changed), and ignores both the
// declared charset and a Content-Encoding (a gzip body read as garbled JSON); these are refused,
// naming what to send instead (./problem.ts: their codes). A JSON number is parsed into a double:
// one written with more digits than a double holds (`10.0099999999999999` parses as 10.01) would
// reach the checks already rounded, so it is refused naming its field: money is never rounded.
import type { FastifyInstance } from "fastify";
import { InvalidRequest } from "../errors.js";
import { Decimal } from "../money.js";

const utf8 = new TextDecoder("utf-8", { fatal: true });
const CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)/i;

const refused = (code: string) => Object.assign(new Error(code), { code });

export function strictJsonBodies(app: FastifyInstance, bodyLimit: number): void {
  const parse = app.getDefaultJsonParser("error", "error");
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "buffer", bodyLimit }, (req, body, done) => {
    const encoding = req.headers["content-encoding"]?.trim().toLowerCase();
    if (encoding && encoding !== "identity") return done(refused("CF_BODY_ENCODED"), undefined);
    const charset = CHARSET.exec(req.headers["content-type"] ?? "")?.[1]?.toLowerCase();
    if (charset !== undefined && charset !== "utf-8" && charset !== "utf8") return done(refused("CF_BODY_CHARSET"), undefined);
    let text: string;
    try {
      text = utf8.decode(body as Buffer);
    } catch {
      return done(refused("CF_BODY_NOT_UTF8"), undefined);
    }
    parse(req, text, (error: Error | null, parsed?: unknown) => {
      const inexact = error ? undefined : inexactNumber(text);
      if (!inexact) return done(error, parsed);
      const { key, literal } = inexact;
      const field = key ?? "body";
      const code = key === "amount" || key === "tip" ? "amount_invalid" : "parameter_invalid";
      done(new InvalidRequest(`${field}: the JSON number ${literal} has more digits than a JSON number keeps exactly (it would be read as ${Number(literal)}); send it as a string, e.g. "${literal}"`, key, code), undefined);
    });
  });
}

/** Strings (skipped whole: digits inside them are not numbers) and numbers, in order. */
const TOKENS = /"(?:[^"\\]|\\.)*"(\s*:)?|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g;
/** Up to 15 significant digits a double always holds exactly: only longer numbers are examined. */
const LONG_NUMBER = /\d[\d.]{15,}|\d[eE]/;

/**
 * The first finite number of a (valid) JSON text that a double does not hold as written, with the
 * key it is the value of (the nearest key before it), or undefined.
 */
export function inexactNumber(text: string): { key: string | null; literal: string } | undefined {
  if (!LONG_NUMBER.test(text)) return undefined;
  let key: string | null = null;
  for (const [token, colon] of text.matchAll(TOKENS)) {
    if (token.startsWith('"')) {
      if (colon) key = JSON.parse(token.slice(0, token.lastIndexOf('"') + 1)) as string;
      continue;
    }
    const value = Number(token);
    if (Number.isFinite(value) && !new Decimal(token).equals(new Decimal(value))) return { key, literal: token };
  }
  return undefined;
}
