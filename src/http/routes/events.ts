// The event feed (extension): an account's public events, oldest first, paged by a stable cursor.
import { z } from "zod";
import { InvalidRequest } from "../../errors.js";
import { Count, Cursor, Id } from "../../inputs.js";
import { PUBLIC_EVENT_TYPES, type PublicEventType } from "../../present/public-events.js";
import type { Webhooks } from "../../webhooks/index.js";
import type { FeedPage } from "../../webhooks/feed.js";
import { defineRoute } from "../route.js";
import { CustomerCardOut, PaymentRecordOut, TerminalOut } from "../schemas.js";

export const ListEventsInput = z.strictObject({
  external_account_id: Id,
  /** An opaque next_cursor of this account (src/webhooks/cursor.ts); checked when the page is read. */
  after: Cursor(200, "a next_cursor this endpoint returned").optional(),
  limit: Count(1, 1000).optional(),
  /** One type or several, comma-separated. */
  type: z.string().max(1000).optional(),
  payment_id: Id.optional(),
});

export const PublicEventOut = z
  .strictObject({
    id: z.string(),
    object: z.literal("event"),
    type: z.enum(PUBLIC_EVENT_TYPES),
    created: z.iso.datetime({ offset: true }),
    external_account_id: z.string(),
    payment_id: z.string().nullable(),
    sequence: z.number().int().positive(),
    request_id: z.number().int(),
    data: z.strictObject({ object: z.union([PaymentRecordOut("v2"), CustomerCardOut, TerminalOut]) }),
  })
  .meta({ title: "Event" });

export const EventPageOut = z.strictObject({ data: z.array(PublicEventOut), next_cursor: z.string(), has_more: z.boolean() });

export function typesOf(raw: string | undefined): PublicEventType[] | undefined {
  if (raw === undefined) return undefined;
  const types = raw.split(",").map((t) => t.trim());
  const unknown = types.find((t) => !(PUBLIC_EVENT_TYPES as readonly string[]).includes(t));
  if (unknown !== undefined) throw new InvalidRequest(`type: unknown event type ${JSON.stringify(unknown)}; one of ${PUBLIC_EVENT_TYPES.join(", ")}`, "type", "parameter_invalid");
  return types as PublicEventType[];
}

export function eventRoutes(webhooks: Webhooks) {
  return [
    defineRoute({
      method: "GET",
      path: "/events",
      versions: ["v2"],
      summary: "List the account's events, oldest first",
      description:
        "Public events (`payment_intent.created`, `payment_intent.succeeded`, … see the README) in the order they happened. Each carries the object as it stood right after, `payment_id` and a per-payment `sequence`. Store `next_cursor` and pass it as `after` to continue: no event is missed or repeated. Filters: `type` (comma-separated), `payment_id`. `limit` 1–1000 (default 100).",
      extension: true,
      auth: "api_key",
      input: ListEventsInput,
      response: () => EventPageOut,
      run: (input) =>
        webhooks.feed.page(input.external_account_id, {
          after: input.after,
          limit: input.limit ?? 100,
          types: typesOf(input.type),
          payment_id: input.payment_id,
        }),
      present: (page: FeedPage) => page,
    }),
  ];
}
