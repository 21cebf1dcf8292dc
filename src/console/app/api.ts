// The console's session: the typed client (cardflow/client) with the API key the person signed in
// with, kept in sessionStorage only (gone when the tab closes), and errors put into words.
import { ApiError, ConnectionError, createClient, type Account, type Client } from "../../client/index.js";

export interface Session {
  client: Client;
  account: Account;
}

/** What every page gets. */
export interface PageProps {
  session: Session;
  /** Called when the key stops being valid (revoked): back to sign-in. */
  onUnauthorized: () => void;
}

const KEY = "cardflow.console.key";

/**
 * A key holding a character no API key has (an invisible or typographic one, copied along): the
 * browser refuses to send it at all, which would read as a service that does not answer.
 */
class KeyNotWellFormed extends Error {}

/** Signs in: the key is valid when the service names its account. */
export async function signIn(apiKey: string): Promise<Session> {
  if (!/^[\x21-\x7e]*$/.test(apiKey)) throw new KeyNotWellFormed();
  const client = createClient({ baseUrl: location.origin, apiKey, maxRetries: 2 });
  const account = await client.account();
  sessionStorage.setItem(KEY, apiKey);
  return { client, account };
}

/**
 * The tab's session again after a reload (null: not signed in). Every failure is thrown; only a key
 * the service refuses (401: revoked or expired meanwhile) is forgotten. No answer, or another error
 * answer (a proxy's 502, a 503), keeps the key: the service, not the key, is at fault.
 */
export async function resumeSession(): Promise<Session | null> {
  const key = sessionStorage.getItem(KEY);
  if (!key) return null;
  try {
    return await signIn(key);
  } catch (error) {
    if (isUnauthorized(error)) sessionStorage.removeItem(KEY);
    throw error;
  }
}

export function signOut(): void {
  sessionStorage.removeItem(KEY);
}

export interface ErrorWords {
  title: string;
  detail: string;
  meta: string | null;
}

/** A problem+json answer, in words: what was refused and why, then its code, field and request. */
export function errorWords(error: unknown): ErrorWords {
  if (error instanceof ApiError) {
    // a refused key: said once, with what to do (the API's detail would only repeat it)
    if (error.status === 401) return { title: "That API key is not valid", detail: "Check that it was copied whole, or issue another: npx cardflow accounts key <account>.", meta: `HTTP 401 · ${error.code}` };
    const title =
      error.status === 404 ? "Not found" :
      error.status === 409 ? "Not allowed now" :
      error.status === 402 ? "The processor refused" :
      error.status >= 500 ? "The service failed" : "The request was refused";
    // a step the status does not allow: the detail already names the status and the allowed next
    // steps (in /v2's words, `succeeded`, a card save's /v1 refusal too: the typed client says it so)
    const meta = [`HTTP ${error.status}`, error.code, error.param && `field ${error.param}`, error.request_id && `request ${error.request_id}`].filter(Boolean).join(" · ");
    return { title, detail: `${error.detail.charAt(0).toUpperCase()}${error.detail.slice(1)}.`, meta };
  }
  if (error instanceof KeyNotWellFormed) return { title: "That API key is not valid", detail: "It holds a character no API key has (a space, an invisible or a typographic one, copied along): copy it again, or issue another: npx cardflow accounts key <account>.", meta: null };
  if (error instanceof ConnectionError) {
    // a command's answer lost on the way back: the service may have applied it (a retry with its
    // Idempotency-Key is safe; the page updates once the service answers again)
    const detail = error.method === "GET" ? "Nothing could be read. Check that it is running, then try again." : "It may or may not have made the change: look again once the service answers, before trying again.";
    return { title: "The service does not answer", detail, meta: null };
  }
  return { title: "Something went wrong", detail: error instanceof Error ? error.message : String(error), meta: null };
}

export const isUnauthorized = (error: unknown) => error instanceof ApiError && error.status === 401;
