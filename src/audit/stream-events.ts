// The events of a stream other than a payment's, against the schemas of this release: an account,
// terminal, API key or late-answer stream holds domain events, a webhook endpoint's streams webhook
// events. An unknown type, a version a later release wrote, or data its schema refuses cannot be
// read by the service (a payment stream's are refused by its fold: ./machine-history.ts). Streams
// of a kind this release does not name (an embedder's own) are not judged.
import type { z } from "zod";
import { DomainEvent, WebhookEvent } from "../../machines/events.js";
import { upcast } from "../../machines/event-versions.js";
import type { RecordedEvent } from "../store/port.js";
import type { Finding } from "./findings.js";

/** A union of event schemas, and the types it knows. */
const kind = (schema: typeof DomainEvent | typeof WebhookEvent) => ({ schema: schema as z.ZodType, types: new Set<string>(schema.options.map((o) => o.shape.type.value)) });
const DOMAIN = kind(DomainEvent);
const WEBHOOK = kind(WebhookEvent);
const KINDS: Array<[prefix: string, ReturnType<typeof kind>]> = [
  ["account-", DOMAIN],
  ["terminal-", DOMAIN],
  ["apikey-", DOMAIN],
  ["late_answers-", DOMAIN],
  ["webhook_endpoint-", WEBHOOK],
  ["webhook_deliveries-", WEBHOOK],
];

/** An `invalid_event` finding for each event of the stream this release cannot read. */
export function invalidEvents(events: readonly RecordedEvent[]): Finding[] {
  const known = events.length ? KINDS.find(([prefix]) => events[0]!.stream.startsWith(prefix))?.[1] : undefined;
  if (!known) return [];
  return events.flatMap((e): Finding[] => {
    const { type, version, data } = upcast(e);
    const parsed = known.schema.safeParse({ type, version, data });
    if (parsed.success) return [];
    const issue = parsed.error.issues[0]!;
    const why = !known.types.has(type) ? "a type it does not know" : `${issue.path.length ? `${issue.path.join(".")}: ` : ""}${issue.message}`;
    return [{ kind: "invalid_event", subject: e.stream, event_id: e.id, revision: e.revision, message: `${e.type} version ${e.version} at revision ${e.revision} of ${e.stream} is not an event this release reads (${why})` }];
  });
}
