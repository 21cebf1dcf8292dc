// Webhook endpoints (extension): where an account's public events are posted, signed.
import { z } from "zod";
import { Id } from "../../inputs.js";
import { PUBLIC_EVENT_TYPES } from "../../present/public-events.js";
import { CreateEndpointInput, EndpointRef, type EndpointOut } from "../../webhooks/endpoints.js";
import type { DeliveryRecord } from "../../webhooks/delivery-records.js";
import { DeliveryRef, ListDeliveriesInput, type RetriedDelivery, type Webhooks } from "../../webhooks/index.js";
import { defineRoute } from "../route.js";

const EndpointFields = {
  id: z.string(),
  object: z.literal("webhook_endpoint"),
  external_account_id: z.string(),
  url: z.string(),
  event_types: z.array(z.enum(PUBLIC_EVENT_TYPES)).nullable(),
  status: z.enum(["enabled", "failing", "deleted"]),
  created: z.iso.datetime({ offset: true }),
};
export const WebhookEndpointOut = z.strictObject(EndpointFields).meta({ title: "WebhookEndpoint" });
export const CreatedWebhookEndpointOut = z.strictObject({ ...EndpointFields, secret: z.string() }).meta({ title: "CreatedWebhookEndpoint" });

export const WebhookDeliveryOut = z
  .strictObject({
    id: z.string(),
    object: z.literal("webhook_delivery"),
    endpoint_id: z.string(),
    external_account_id: z.string(),
    event_type: z.string(),
    payment_id: z.string().nullable(),
    sequence: z.number().int(),
    attempts: z.number().int().positive(),
    delivered: z.boolean(),
    status_code: z.number().int().nullable(),
    error: z.string().nullable(),
    duration_ms: z.number(),
    last_attempt_at: z.iso.datetime({ offset: true }),
    next_attempt_at: z.iso.datetime({ offset: true }).nullable(),
  })
  .meta({ title: "WebhookDelivery" });

export const RetriedDeliveryOut = WebhookDeliveryOut.extend({ endpoint_reenabled: z.boolean() }).meta({ title: "RetriedWebhookDelivery" });

export function webhookEndpointRoutes(webhooks: Webhooks) {
  return [
    defineRoute({
      method: "POST",
      path: "/webhook_endpoints",
      versions: ["v2"],
      summary: "Register a webhook endpoint",
      description:
        "Public events after this moment are POSTed to `url` (http or https; loopback and private addresses only in sandbox mode), each payment's in order, signed with `Cardflow-Signature`. `event_types` limits them (default: all). The answer's `secret` verifies signatures; it is shown only here.",
      extension: true,
      auth: "api_key",
      input: CreateEndpointInput,
      response: () => CreatedWebhookEndpointOut,
      run: (input, { command }) => webhooks.createEndpoint(input, command),
      present: (endpoint: EndpointOut) => endpoint,
    }),
    defineRoute({
      method: "GET",
      path: "/webhook_endpoints",
      versions: ["v2"],
      summary: "List the account's webhook endpoints",
      description: "`status`: `enabled`, or `failing` once deliveries kept failing past the retry horizon (3 days by default).",
      extension: true,
      auth: "api_key",
      input: z.strictObject({ external_account_id: Id }),
      response: () => z.strictObject({ data: z.array(WebhookEndpointOut) }),
      run: (input) => webhooks.listEndpoints(input.external_account_id),
      present: (data: EndpointOut[]) => ({ data }),
    }),
    defineRoute({
      method: "DELETE",
      path: "/webhook_endpoints/:endpoint_id",
      versions: ["v2"],
      summary: "Delete a webhook endpoint",
      description: "Nothing more is posted to it; the events stay in the feed.",
      extension: true,
      auth: "api_key",
      input: EndpointRef,
      response: () => WebhookEndpointOut,
      run: (input, { command }) => webhooks.deleteEndpoint(input, command),
      present: (endpoint: EndpointOut) => endpoint,
    }),
    defineRoute({
      method: "GET",
      path: "/webhook_endpoints/:endpoint_id/deliveries",
      versions: ["v2"],
      summary: "List an endpoint's deliveries",
      description: "One row per event posted to the endpoint (its id is the event's), updated on each attempt: `attempts`, `delivered`, the last `status_code` or `error`, `next_attempt_at` while it is retried. Newest first; `limit` (1–100, default 20) and `starting_after` (the last `id` of the page before; 404 for an id that is no delivery of this endpoint) page through them, `has_more` says whether another page follows. Delivery state, not events: it never grows the payments' streams.",
      extension: true,
      auth: "api_key",
      input: ListDeliveriesInput,
      response: () => z.strictObject({ data: z.array(WebhookDeliveryOut), has_more: z.boolean() }),
      run: (input) => webhooks.listDeliveries(input),
      present: (page: { data: DeliveryRecord[]; has_more: boolean }) => page,
    }),
    defineRoute({
      method: "POST",
      path: "/webhook_endpoints/:endpoint_id/deliveries/:event_id/retry",
      versions: ["v2"],
      summary: "Retry a delivery now",
      description:
        "A delivery waiting for its next attempt (backoff) is posted again at once, by whichever process delivers to the endpoint. One that was acknowledged is 409. An endpoint marked `failing` is enabled again (with a fresh retry horizon) and the answer says so: `endpoint_reenabled: true`. The answer is the delivery as the retry found it, its `next_attempt_at` now: the post follows it, its outcome in the deliveries list.",
      extension: true,
      auth: "api_key",
      input: DeliveryRef,
      response: () => RetriedDeliveryOut,
      run: (input, { command }) => webhooks.retryDelivery(input, command),
      present: (row: RetriedDelivery) => row,
      recordWithEvents: false,
    }),
  ];
}
