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
 * Why a body the framework's parser refused is not taken, in the words of the one cause: where the
 * text stops being JSON, or the prototype key the parser refuses in JSON that parses. Never
 * JSON.parse's message: it quotes the text around the fault ('Unexpected token ...,
 * ..."4242424242424242",x}" is not valid JSON'), a card number or a secret of the body with it.
 */
function notJson(text: string): InvalidRequest {
  try {
    JSON.parse(text);
  } catch {
    const at = notJsonAt(text);
    const where = at < 0 ? "" : at === text.length ? ` (it ends early, at position ${at})` : ` (at position ${at})`;
    return new InvalidRequest(`the body is not valid JSON${where}`, null, "invalid_json");
  }
  return new InvalidRequest("the body has a __proto__ or constructor.prototype key, refused (prototype poisoning)", null, "invalid_json");
}

const SPACE = /[ \t\n\r]*/y;
/**
 * The longest start a string (its closing quote not included), a number or a literal can have (RFC
 * 8259): where it ends, the text stops being JSON, unless the token is whole there (a number: a
 * digit last; a string: its closing quote next, else an escape cut short may go on a little).
 */
const STRING = /"(?:[^"\\\u0000-\u001f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*/y;
const ESCAPE_START = /\\(?:u[0-9a-fA-F]{0,3})?/y;
const NUMBER = /-?(?:(?:0|[1-9]\d*)(?:\.(?:\d+(?:[eE][+-]?\d*)?)?|[eE][+-]?\d*)?)?/y;
const LITERAL = /t(?:r(?:ue?)?)?|f(?:a(?:l(?:se?)?)?)?|n(?:u(?:ll?)?)?/y;
const LITERALS = new Set(["true", "false", "null"]);

/**
 * Where `text` stops being JSON: the index (in UTF-16 units, as JSON.parse counts) of the first
 * character no JSON text could have there (the text's length: it ended early); -1 if none.
 * A loop over the open containers, not recursion: 64 KiB of `[` overflows no stack.
 */
export function notJsonAt(text: string): number {
  const open: string[] = []; // the closing bracket of each open container
  let i = 0;
  const match = (pattern: RegExp) => {
    pattern.lastIndex = i;
    return pattern.test(text) ? pattern.lastIndex - i : 0;
  };
  let want: "value" | "key" | "after" = "value";
  for (;;) {
    i += match(SPACE);
    const c = text[i];
    if (want === "after") {
      // a value ended: the text's end, a comma or its container's closing bracket
      if (open.length === 0) return i === text.length ? -1 : i;
      if (c === ",") want = open.at(-1) === "}" ? "key" : "value";
      else if (c === open.at(-1)) open.pop();
      else return i;
      i++;
    } else if (c === '"') {
      i += match(STRING);
      if (text[i] !== '"') return i + match(ESCAPE_START);
      i++;
      if (want === "key") {
        i += match(SPACE);
        if (text[i] !== ":") return i;
        i++;
        want = "value";
      } else want = "after";
    } else if (want === "key") {
      return i;
    } else if (c === "{" || c === "[") {
      open.push(c === "{" ? "}" : "]");
      i++;
      i += match(SPACE);
      // an empty container closes at once
      if (text[i] === open.at(-1)) {
        open.pop();
        i++;
        want = "after";
      } else want = c === "{" ? "key" : "value";
    } else if (c === "-" || (c !== undefined && c >= "0" && c <= "9")) {
      i += match(NUMBER);
      if (!/\d/.test(text[i - 1]!)) return i;
      want = "after";
    } else {
      const length = match(LITERAL);
      if (!LITERALS.has(text.slice(i, i + length))) return i + length;
      i += length;
      want = "after";
    }
  }
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
