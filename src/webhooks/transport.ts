// One webhook POST through the guarded outbound client (src/outbound/client.ts: https only outside
// the sandbox, addresses judged at connection time, no redirect followed, a hard timeout). Any
// answer is a result; only a 2xx acknowledges (a 3xx is not followed, so it is not one), whatever
// its body (read and dropped: a large one is no failure).
import { OutboundRefused, type Outbound } from "../outbound/client.js";

export interface PostResult {
  /** The receiver's status; null when there was no answer. */
  status: number | null;
  error: string | null;
}

export interface PostOptions {
  timeoutMs: number;
}

export type Post = (url: string, body: string, headers: Record<string, string>, options: PostOptions) => Promise<PostResult>;

/** Posts with this client; never throws: a refusal or a failure is the result's error. */
export function postWith(outbound: Outbound): Post {
  return async (url, body, headers, { timeoutMs }) => {
    try {
      const answer = await outbound.request(url, { method: "POST", headers: { "content-type": "application/json", "user-agent": "cardflow-webhooks/1", ...headers }, body, timeoutMs, statusOnly: true });
      return { status: answer.status, error: null };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      return { status: null, error: error instanceof OutboundRefused ? `not delivered: ${message}` : message };
    }
  };
}
