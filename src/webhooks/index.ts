// Webhooks and the event feed, over an engine: public events (./public-events.ts) indexed from
// the event log (./feed.ts), webhook endpoints stored as events (./endpoints.ts), signed delivery
// driven by the log (./delivery.ts).
import { randomBytes } from "node:crypto";
import type { DomainEvent } from "../../machines/events.js";
import { isoTimestamp } from "../clock.js";
import type { CommandContext, Engine } from "../engine.js";
import { parseInput } from "../inputs.js";
import { createOutbound, type Outbound } from "../outbound/client.js";
import { createDelivery, type DeliveryOptions } from "./delivery.js";
import { appendChained, checkEndpointUrl, CreateEndpointInput, EndpointRef, endpointNotFound, present, signingSecrets, webhookStreams, type EndpointDoc, type EndpointOut } from "./endpoints.js";
import { cursorCodec } from "./cursor.js";
import { createEventFeed, FEED } from "./feed.js";
import { deliveryRecords, type DeliveryRecord } from "./delivery-records.js";
import { Conflict, NotFound } from "../errors.js";
import { z } from "zod";
import { Count, Id } from "../inputs.js";

export const DeliveryRef = z.strictObject({ external_account_id: Id, endpoint_id: Id, event_id: Id });
/** A page of an endpoint's deliveries: `limit` 1–100 (default 20), after the event `starting_after`. */
export const ListDeliveriesInput = EndpointRef.extend({ limit: Count(1, 100).default(20), starting_after: Id.optional() });

export interface WebhooksOptions extends Partial<Omit<DeliveryOptions, "store" | "readModels" | "feed" | "clock" | "ids" | "secretOf" | "keyId" | "outbound">> {
  engine: Engine;
  /** The guarded client receivers are posted with (default: https only, no special-purpose address). */
  outbound?: Outbound;
  /** Endpoints one account may have (default 16): one tenant cannot fan a payment out to hundreds of URLs. */
  maxEndpointsPerAccount?: number;
  /** Derives every endpoint's secret; keep it outside the event log (default: a random key, for this process only). */
  signingKey?: Buffer;
}

export function createWebhooks({ engine, signingKey = randomBytes(32), outbound = createOutbound({ sandbox: false, allowPrivate: false, allowlist: [] }), maxEndpointsPerAccount = 16, ...deliveryOptions }: WebhooksOptions) {
  const { store, readModels, clock, ids } = engine;
  const { keyId, secretOf, derivedKey } = signingSecrets(signingKey);
  const { onError } = deliveryOptions;
  // one catch-up with the engine's read models: one read and one transaction per batch for both
  const feed = createEventFeed({ store, readModels, runner: engine.projections, cursors: cursorCodec(derivedKey("feed cursors")), ...(onError && { onError }) });
  const delivery = createDelivery({ ...deliveryOptions, store, readModels, feed, clock, ids, secretOf, keyId, outbound });

  /** The account's endpoints: its key prefix holds another account's too when that one's id is this one's and a "/" more. */
  const accountEndpoints = async (accountId: string) => (await readModels.list<EndpointDoc>(FEED.endpoints, `${accountId}/`)).filter((d) => d.external_account_id === accountId);

  async function findEndpoint(accountId: string, endpointId: string): Promise<EndpointDoc> {
    await feed.caughtUp();
    const doc = await readModels.get<EndpointDoc>(FEED.endpoints, `${accountId}/${endpointId}`);
    // the endpoint's own fields decide: "acct" + "x/we_1" is the key of "acct/x"'s we_1
    if (!doc || doc.status === "deleted" || doc.external_account_id !== accountId || doc.endpoint_id !== endpointId) throw endpointNotFound(endpointId);
    return doc;
  }

  /** One creation at a time per account in this process: between the count and the append, another would not be counted. */
  const creating = new Map<string, Promise<unknown>>();
  function oneAtATime<T>(account: string, run: () => Promise<T>): Promise<T> {
    const next = (creating.get(account) ?? Promise.resolve()).catch(() => undefined).then(run);
    creating.set(account, next);
    void next.catch(() => undefined).finally(() => creating.get(account) === next && creating.delete(account));
    return next;
  }

  /** The account's endpoints counted and the new one appended, with no other creation of the account's in between (oneAtATime). */
  async function create(external_account_id: string, checked: string, event_types: string[] | null | undefined, ctx: CommandContext): Promise<EndpointOut> {
    await feed.caughtUp();
    const existing = (await accountEndpoints(external_account_id)).filter((d) => d.status !== "deleted");
    if (existing.length >= maxEndpointsPerAccount) {
      throw new Conflict(`this account has ${existing.length} webhook endpoints, the most it may have (${maxEndpointsPerAccount}); delete one first`, "webhook_endpoint_limit");
    }
    const endpoint_id = ids.id("we");
    const data = { endpoint_id, external_account_id, url: checked, event_types: event_types ?? null, signing_key_id: keyId, created_at: isoTimestamp(clock.now()) };
    const answer = present({ ...data, position: 0, status: "enabled" }, secretOf(endpoint_id));
    const event = { type: "WebhookEndpointCreated", version: 1, data } as unknown as DomainEvent;
    await engine.startStream(webhookStreams.endpoint(endpoint_id), event, ctx, ctx.idempotency?.(answer as never));
    return answer;
  }

  return {
    feed,
    delivery,
    outbound,

    /** Registers a URL for the account's public events; the answer carries the signing secret, shown this once. */
    async createEndpoint(input: unknown, ctx: CommandContext = {}): Promise<EndpointOut> {
      const { external_account_id, url, event_types } = parseInput(CreateEndpointInput, input);
      await engine.getAccount(external_account_id);
      const checked = await checkEndpointUrl(url, outbound);
      return oneAtATime(external_account_id, () => create(external_account_id, checked, event_types, ctx));
    },
    async listEndpoints(accountId: string): Promise<EndpointOut[]> {
      await engine.getAccount(accountId);
      await feed.caughtUp();
      const docs = await accountEndpoints(accountId);
      return docs.filter((d) => d.status !== "deleted").map((d) => present(d));
    },

    async deleteEndpoint(input: unknown, ctx: CommandContext = {}): Promise<EndpointOut> {
      const { external_account_id, endpoint_id } = parseInput(EndpointRef, input);
      const doc = await findEndpoint(external_account_id, endpoint_id);
      const deleted_at = isoTimestamp(clock.now());
      await appendChained(store, webhookStreams.endpoint(endpoint_id), [{ type: "WebhookEndpointDeleted", version: 1, data: { endpoint_id, deleted_at } }], {
        clock,
        ids,
        actor: ctx.actor ?? "library",
        request_id: ctx.request_id,
      });
      await feed.caughtUp();
      return present({ ...doc, status: "deleted" });
    },

    /** The endpoint's deliveries (rows of delivery state, newest events last), and a retry asked now. */
    /** A page of the endpoint's deliveries, newest first (`limit`, `starting_after` an event id of the page before). */
    async listDeliveries(input: unknown): Promise<{ data: DeliveryRecord[]; has_more: boolean }> {
      const { external_account_id, endpoint_id, limit, starting_after } = parseInput(ListDeliveriesInput, input);
      await findEndpoint(external_account_id, endpoint_id);
      return deliveryRecords(readModels).page(endpoint_id, { limit, startingAfter: starting_after });
    },
    /** Posts a delivery again now; an endpoint marked failing is enabled again by it (`endpoint_reenabled`). */
    async retryDelivery(input: unknown, ctx: CommandContext = {}): Promise<RetriedDelivery> {
      const { external_account_id, endpoint_id, event_id } = parseInput(DeliveryRef, input);
      const endpoint = await findEndpoint(external_account_id, endpoint_id);
      const records = deliveryRecords(readModels);
      const row = await records.get(endpoint_id, event_id);
      // an event not tried yet at this endpoint (one that came while it was failing, say) has no delivery to retry
      if (!row) throw new NotFound("webhook delivery", event_id, "event_id", `to endpoint ${endpoint_id}: a delivery is retried once it was tried (events that came while the endpoint was failing are posted once it is enabled again)`);
      if (row.delivered) throw new Conflict(`delivery ${event_id} was acknowledged (${row.status_code}): nothing to retry`, "delivery_delivered");
      const reenable = endpoint.status === "failing";
      const at = clock.now();
      // asked first: the worker that starts once the endpoint is enabled finds it
      await records.askRetry(endpoint_id, { event_id, at, reenabled: reenable });
      if (reenable) {
        const data = { endpoint_id, event_id, enabled_at: isoTimestamp(at) };
        await appendChained(store, webhookStreams.endpoint(endpoint_id), [{ type: "WebhookEndpointEnabled", version: 1, data }], { clock, ids, actor: ctx.actor ?? "library", request_id: ctx.request_id });
        await feed.caughtUp();
      }
      // the worker holding the endpoint (here or in another process) picks it up on its next turn
      for (const wake of delivery.wakers()) wake();
      // the row as the retry found it, its next attempt now: the post follows the answer (on whichever
      // process delivers to the endpoint), its outcome in the deliveries list, alike whether it was failing
      return { ...row, next_attempt_at: isoTimestamp(at), endpoint_reenabled: reenable };
    },

    secretOf,
    /** A key for another purpose, derived from the signing key (the same in every process that shares it). */
    derivedKey,
  };
}

export type Webhooks = ReturnType<typeof createWebhooks>;
/** A delivery asked to be posted again, and whether that enabled its failing endpoint again. */
export type RetriedDelivery = DeliveryRecord & { endpoint_reenabled: boolean };
export { verifyWebhook, signatureHeader, SIGNATURE_HEADER } from "./signature.js";
export { PUBLIC_EVENT_TYPES, type PublicEvent, type PublicEventType } from "../present/public-events.js";
