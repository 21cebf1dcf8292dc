// Hash routes with their query held in the URL (`#/payments?status=succeeded&q=order-1001`): a
// filtered list can be shared, reloaded, and the back button returns to the filters before.
import { useEffect, useState } from "preact/hooks";

export interface Route {
  /** The path's parts: ["payments", "pi_1"]. */
  parts: string[];
  params: URLSearchParams;
  /** The path as typed when it cannot be decoded (a malformed %-escape: `#/payments/100%off`); its parts are then empty. */
  invalid?: string;
}

const parse = (hash: string): Route => {
  const [path = "", query = ""] = hash.replace(/^#/, "").split("?");
  const params = new URLSearchParams(query);
  let parts: string[];
  try {
    parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  } catch {
    // decodeURIComponent throws a URIError: thrown while rendering, it would blank the console
    return { parts: [], params, invalid: path };
  }
  return { parts: parts.length ? parts : ["payments"], params };
};

export function useRoute(): Route {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const onChange = () => setHash(location.hash);
    addEventListener("hashchange", onChange);
    return () => removeEventListener("hashchange", onChange);
  }, []);
  return parse(hash);
}

/** The href of a page with its query; empty values are left out. */
export function href(path: string, params: Record<string, string | undefined> = {}): string {
  const query = new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => !!e[1])).toString();
  return `#${path}${query ? `?${query}` : ""}`;
}

/** Goes to a page (a new history entry, so Back returns here). */
export function navigate(path: string, params: Record<string, string | undefined> = {}): void {
  const next = href(path, params);
  if (next !== location.hash) location.hash = next;
}

/** The params as a plain record of the names asked for ("" when absent). */
export function paramsOf<K extends string>(params: URLSearchParams, names: readonly K[]): Record<K, string> {
  return Object.fromEntries(names.map((n) => [n, params.get(n) ?? ""])) as Record<K, string>;
}
