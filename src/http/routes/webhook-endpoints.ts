// Webhook endpoints (extension): where an account's public events are posted, signed.
import { z } from "zod";
import { Id } from "../../inputs.js";
import { PUBLIC_EVENT_TYPES } from "../../present/public-events.js";
import { CreateEndpointInput, EndpointRef, type EndpointOut } from "../../webhooks/endpoints.js";
import type { Webhooks } from "../../webhooks/index.js";
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
  ];
}
