// Read-model documents parsed once per text and shared: a list reads the same documents again and
// again (an account's first page, a console's refresh), and parsing them was most of what its
// query cost (JSON.parse about half of a list's query under row 14a's profile). Kept by projection
// and key with the text they were parsed from: a document read again is the same text (a
// comparison of bytes, where hashing the 1-3 KB text for a map cost half of what parsing it did),
// a changed one is parsed again; the least recently read fall out past `max`. Shared, so frozen: a
// reader that changed one would change it for every later reader (in strict code the change
// throws instead).
import { setBounded } from "../../bounded.js";
import { parseDocument } from "./read-models.js";

/** Freezes the value and everything it holds. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

export function parsedDocs(max = 4096) {
  const cache = new Map<string, { text: string; doc: unknown }>();
  return function parse<T>(projection: string, key: string, text: string): T {
    const id = `${projection}\0${key}`;
    const found = cache.get(id);
    const entry = found !== undefined && found.text === text ? found : { text, doc: deepFreeze(parseDocument(projection, key, text)) };
    setBounded(cache, id, entry, max); // set again: the most recently read
    return entry.doc as T;
  };
}
