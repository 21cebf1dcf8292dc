// Webhook endpoints: a merchant's URL and the public event types it wants, stored as events on
// the endpoint's own stream. The signing secret is derived, not stored: HMAC(signing key, endpoint
// id). The event log (exported, audited, copied) then holds no secret; the signing key lives
// outside it (WEBHOOK_SIGNING_KEY or a key file beside the store: ./config.ts). The events record
// which key (`signing_key_id`), so a changed key is noticed instead of signing with wrong secrets.
import { createHash, createHmac, hkdfSync } from "node:crypto";
import { z } from "zod";
import { webhookStreams, type WebhookEvent } from "../../machines/events.js";
import { chainEvents, hashOf } from "../events/chain.js";
import { isoTimestamp, type Clock } from "../clock.js";
import { InvalidRequest, NotFound } from "../errors.js";
import type { Ids } from "../ids.js";
import { Id } from "../inputs.js";
import { missingHost, type Outbound } from "../outbound/client.js";
import { WrongExpectedRevision, type EventStore, type RecordedEvent } from "../store/port.js";
import { PUBLIC_EVENT_TYPES } from "../present/public-events.js";

export interface EndpointDoc {
  endpoint_id: string;
  external_account_id: string;
  url: string;
  event_types: string[] | null;
  signing_key_id: string;
  created_at: string;
  /** Global position of its creation: it receives the public events after it. */
  position: number;
  status: "enabled" | "failing" | "deleted";
  /** Global position of the event that set the status (absent in documents folded before it was kept). */
  status_position?: number;
}

/** An endpoint as the API shows it (the secret only once, when created). */
export interface EndpointOut {
  id: string;
  object: "webhook_endpoint";
  external_account_id: string;
  url: string;
  event_types: string[] | null;
  status: EndpointDoc["status"];
  created: string;
  secret?: string;
}

export const CreateEndpointInput = z.strictObject({
  external_account_id: Id,
  url: z.string().max(2048),
  // absent or null (as an endpoint's answer writes it): every type
  event_types: z
    .array(z.enum(PUBLIC_EVENT_TYPES))
    .min(1)
    .refine((types) => new Set(types).size === types.length, "lists an event type more than once: list each once")
    .nullish(),
});
export const EndpointRef = z.strictObject({ external_account_id: Id, endpoint_id: Id });

/** The endpoint after one event of its stream; null for events of other streams. */
export function endpointOf(doc: EndpointDoc | undefined, e: RecordedEvent): EndpointDoc | null {
  const data = e.data as Record<string, unknown>;
  switch (e.type) {
    case "WebhookEndpointCreated": {
      const { endpoint_id, external_account_id, url, event_types, signing_key_id, created_at } = data as Extract<WebhookEvent, { type: "WebhookEndpointCreated" }>["data"];
      return { endpoint_id, external_account_id, url, event_types, signing_key_id, created_at, position: e.position, status: "enabled", status_position: e.position };
    }
    case "WebhookEndpointDeleted":
      return doc ? { ...doc, status: "deleted", status_position: e.position } : null;
    case "WebhookEndpointFailing":
      return doc && doc.status === "enabled" ? { ...doc, status: "failing", status_position: e.position } : (doc ?? null);
    case "WebhookEndpointEnabled":
      return doc && doc.status === "failing" ? { ...doc, status: "enabled", status_position: e.position } : (doc ?? null);
    default:
      return null;
  }
}

export const present = (doc: EndpointDoc, secret?: string): EndpointOut => ({
  id: doc.endpoint_id,
  object: "webhook_endpoint",
  external_account_id: doc.external_account_id,
  url: doc.url,
  event_types: doc.event_types,
  status: doc.status,
  created: doc.created_at,
  ...(secret === undefined ? {} : { secret }),
});

/** What signs: the key, its id (recorded with each endpoint) and each endpoint's secret. */
export function signingSecrets(signingKey: Buffer) {
  const keyId = createHash("sha256").update(signingKey).digest("hex").slice(0, 16);
  return {
    keyId,
    secretOf: (endpointId: string) => `whsec_${createHmac("sha256", signingKey).update(`webhook-endpoint:${endpointId}`).digest("base64url")}`,
    /** 32 bytes for one purpose (HKDF-SHA256 of the signing key): feed and payment-list cursors, idempotency records. */
    derivedKey: (purpose: string) => Buffer.from(hkdfSync("sha256", signingKey, Buffer.alloc(0), `cardflow ${purpose}`, 32)),
  };
}

/**
 * An absolute http(s) URL without credentials that the guarded client would request (https
 * outside the sandbox; an address literal allowed by its policy; a name whose addresses, as it
 * resolves now, the policy allows). A name is judged again on each delivery, on the addresses it
 * resolves to then (it may have changed since).
 */
export async function checkEndpointUrl(raw: string, outbound: Outbound): Promise<string> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    // the one part WHATWG URL parsing refuses that a reader would not see: a port past 65535
    const port = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*:(\d+)(?:[/?#]|$)/i.exec(raw)?.[1];
    if (port !== undefined && Number(port) > 65_535) throw new InvalidRequest(`url: port ${port} is not a port (1 to 65535)`, "url", "url_invalid");
    throw new InvalidRequest("url: not an absolute URL", "url", "url_invalid");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new InvalidRequest("url: only http and https URLs receive webhooks", "url", "url_invalid");
  const hostless = missingHost(raw);
  if (hostless) throw new InvalidRequest(`url: ${hostless}`, "url", "url_invalid");
  if (url.username || url.password) throw new InvalidRequest("url: credentials in the URL are not accepted", "url", "url_invalid");
  if (url.port === "0") throw new InvalidRequest("url: port 0 cannot be connected to; give the receiver's port, or none for the scheme's", "url", "url_invalid");
  // refusal() judges an address literal, and a name of this host (localhost) on every address it stands for
  const refused = outbound.refusal(url.toString()) ?? (await outbound.nameRefusal(url.toString()));
  if (refused) throw new InvalidRequest(`url: ${refused}`, "url", url.protocol === "http:" && !outbound.sandbox ? "url_invalid" : "url_not_allowed");
  return url.toString();
}

/** Appends to a stream that is not a payment's, linking the hash chain; retries when another writer got there first. */
export async function appendChained(store: EventStore, stream: string, events: WebhookEvent[], { clock, ids, actor, request_id }: { clock: Clock; ids: Ids; actor: string; request_id?: number | undefined }) {
  for (let attempt = 1; ; attempt++) {
    const [head] = await store.readStream(stream, { direction: "backwards", maxCount: 1 });
    const metadata = { timestamp: isoTimestamp(clock.now()), request_id: request_id ?? ids.requestId(), idempotency_key: null, actor };
    const data = chainEvents(stream, head ? hashOf(head) : null, events.map((e) => ({ id: ids.uuid(), ...e, metadata: { ...metadata } })));
    try {
      return await store.append(stream, data, { expectedRevision: head ? head.revision : "no_stream" });
    } catch (error) {
      if (!(error instanceof WrongExpectedRevision) || attempt >= 5) throw error;
    }
  }
}

export function endpointNotFound(endpointId: string): NotFound {
  return new NotFound("webhook endpoint", endpointId, "endpoint_id");
}

export { webhookStreams };
