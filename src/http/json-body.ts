// Request bodies are JSON in UTF-8, read as sent. Fastify's own parser decodes any bytes as UTF-8
// (an invalid byte becomes U+FFFD: a merchant's reference silently changed), and ignores both the
// declared charset and a Content-Encoding (a gzip body read as garbled JSON); these are refused,
// naming what to send instead (./problem.ts: their codes). What JSON.parse would resolve silently is
// refused naming its field: a key given twice (the last would win), a number written with more
// digits than a double holds (`10.0099999999999999` would reach the checks as 10.01: money is never
// rounded).
import type { FastifyInstance } from "fastify";
import { InvalidRequest } from "../errors.js";
import { Decimal, MAX_AMOUNT_MINOR_UNITS, maxAmount } from "../money.js";

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
      if (error) return done((error as { code?: string }).code === "FST_ERR_CTP_INVALID_JSON_BODY" ? notJson(text) : error, undefined);
      const ambiguous = ambiguity(text);
      done(ambiguous ?? null, ambiguous ? undefined : parsed);
    });
  });
}

/**
 * Why a body the framework's parser refused is not taken, in the words of the one cause: JSON.parse's
 * (where the text stops being JSON), or the prototype key the parser refuses in JSON that parses.
 * Less the text JSON.parse quotes around an unexpected token ('Unexpected token ']', ..."4242424242",]"
 * is not valid JSON'): a card number or a secret of the body would be in the answer and the log.
 */
function notJson(text: string): InvalidRequest {
  try {
    JSON.parse(text);
  } catch (error) {
    const cause = (error as Error).message.replace(/, (?:\.\.\.)?".*"(?:\.\.\.)? is not valid JSON$/s, "");
    return new InvalidRequest(`the body is not valid JSON: ${cause}`, null, "invalid_json");
  }
  return new InvalidRequest("the body has a __proto__ or constructor.prototype key, refused (prototype poisoning)", null, "invalid_json");
}

/** Strings (skipped whole: digits inside them are not numbers; a key's with its colon), numbers, brackets, commas (an array's items). */
const TOKENS = /"(?:[^"\\]|\\.)*"(\s*:)?|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|[{}[\],]/g;

/**
 * What a (valid) JSON text says ambiguously, refused naming its field: a key given twice in one
 * object (JSON.parse keeps the last: a proxy or a log reading the first would see another amount),
 * or a number written with more digits than a double keeps exactly.
 */
export function ambiguity(text: string): InvalidRequest | undefined {
  // per open container its keys (null for an array), the field it is the value of (its path, for
  // the error: "extra.a", "event_types.1") and, in an array, the item being read; the nearest key names a number
  const open: Array<{ keys: Set<string> | null; path: string | null; item: number }> = [];
  let key: string | null = null;
  for (const [token, colon] of text.matchAll(TOKENS)) {
    if (token === ",") {
      const top = open.at(-1);
      if (top && top.keys === null) top.item++;
    } else if (token === "{" || token === "[") {
      // the key names this container (taken), or it is an array's item (the array's path and its place)
      open.push({ keys: token === "{" ? new Set() : null, path: key === null ? itemPath(open) : pathOf(open, key), item: 0 });
      key = null;
    } else if (token === "}" || token === "]") {
      open.pop();
      key = null;
    } else if (token.startsWith('"')) {
      if (!colon) continue;
      key = JSON.parse(token.slice(0, token.lastIndexOf('"') + 1)) as string;
      const keys = open.at(-1)?.keys;
      if (keys?.has(key)) {
        const param = pathOf(open, key);
        return new InvalidRequest(`${param}: given twice in one object; send each field once`, param, "parameter_invalid");
      }
      keys?.add(key);
    } else if (key === "external_payment_id" && Number.isInteger(Number(token)) && String(Number(token)) !== token && !/^-?\d{16,}$/.test(token)) {
      // a numeric reference is kept as sent: 100.0, 1e3 or -0 would come back as 100, 1000 or 0
      // (a fraction, 1.5, is refused by its schema; a whole number too long to keep, below)
      return new InvalidRequest(`external_payment_id: the JSON number ${token} would be kept as ${String(Number(token))}, not as written; send it written as a whole number, or the reference as a string`, key, "parameter_invalid");
    } else if (token.length > 15 || /[eE]/.test(token)) {
      // up to 15 digits a double holds exactly: only longer numbers, or exponents, are examined
      const value = Number(token);
      const field = key === null ? itemPath(open) : pathOf(open, key);
      const amount = key === "amount" || key === "tip";
      const code = amount ? "amount_invalid" : "parameter_invalid";
      if (!Number.isFinite(value)) return new InvalidRequest(`${field ?? "body"}: the JSON number ${token} is beyond the range of a JSON number`, field, code);
      // past every currency's largest amount (12 digits of minor units): that refusal, not advice that leads to it
      if (amount && new Decimal(token).abs().greaterThanOrEqualTo(MAX_AMOUNT_MINOR_UNITS + 1)) {
        return new InvalidRequest(`${field}: ${new Decimal(token).toFixed()} is larger than any amount this API takes (12 digits of minor units: at most ${maxAmount("USD")} USD, ${maxAmount("JPY")} JPY)`, field, code);
      }
      if (!new Decimal(token).equals(new Decimal(value))) {
        // an amount's string is plain decimal text (no exponent): suggest that form when it is short
        const plain = new Decimal(token).toFixed();
        const asString = !amount ? `"${token}"` : plain.length <= 40 ? `"${plain}"` : null;
        const advice = asString ? `send it as a string, e.g. ${asString}` : "send it as a plain decimal string";
        return new InvalidRequest(`${field ?? "body"}: the JSON number ${token} has more digits than a JSON number keeps exactly (it would be read as ${value}); ${advice}`, field, code);
      }
    }
  }
  return undefined;
}

type Open = ReadonlyArray<{ keys: Set<string> | null; path: string | null; item: number }>;

/** A field's path among the open containers, as input errors name it: "amount", "extra.a", "event_types.1.a". */
const pathOf = (open: Open, key: string) => {
  const within = open.at(-1)?.path;
  return within ? `${within}.${key}` : key;
};

/** The path of the value being read in the innermost array ("event_types.1"); in an object, or at the top, the container's own. */
const itemPath = (open: Open): string | null => {
  const top = open.at(-1);
  if (!top) return null;
  return top.keys === null ? (top.path === null ? String(top.item) : `${top.path}.${top.item}`) : top.path;
};
