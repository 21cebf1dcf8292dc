// The events of a stream other than a payment's, against what this release writes there: each kind
// of stream holds its own event types (an account stream its one AccountOpened, an API key's stream
// its issue then its revocation or rotation, ...), each valid by its schema, beginning with the
// kind's first event, and naming the stream's own id (an account stream's AccountOpened is that
// account's). Anything else the service cannot read, or would read as something it is not (an
// account stream holding another account's opening, or a payment event). A payment stream's
// events are judged by its fold (./machine-history.ts); streams of a kind this release does not
// name (an embedder's own) are not judged.
import type { z } from "zod";
import { DomainEvent, streams, WebhookEvent, webhookStreams } from "../../machines/events.js";
import { upcast } from "../../machines/event-versions.js";
import type { RecordedEvent } from "../store/port.js";
import type { Finding } from "./findings.js";

/** The event types a union of schemas knows. */
const typesOf = (union: typeof DomainEvent | typeof WebhookEvent) => new Set<string>(union.options.map((o) => o.shape.type.value));
const KNOWN = new Set([...typesOf(DomainEvent), ...typesOf(WebhookEvent)]);

interface StreamKind {
  /** The stream's name from its id, as the service names it. */
  name: (id: string) => string;
  schema: z.ZodType;
  /** Its first event's type, then the types that may follow (none: the stream holds one event). */
  first: string;
  then: readonly string[];
  /** The data field that names the stream's id, in the events that carry it. */
  id: string;
}

const KINDS: StreamKind[] = [
  { name: streams.account, schema: DomainEvent, first: "AccountOpened", then: [], id: "external_account_id" },
  { name: streams.terminal, schema: DomainEvent, first: "TerminalRegistered", then: [], id: "terminal_id" },
  { name: streams.apiKey, schema: DomainEvent, first: "ApiKeyIssued", then: ["ApiKeyRevoked", "ApiKeyRotated"], id: "key_sha256" },
  { name: streams.lateAnswers, schema: DomainEvent, first: "LateAnswerUnapplied", then: ["LateAnswerUnapplied", "LateAnswerSettled"], id: "payment_id" },
  { name: webhookStreams.endpoint, schema: WebhookEvent, first: "WebhookEndpointCreated", then: ["WebhookEndpointDeleted", "WebhookEndpointFailing", "WebhookEndpointEnabled"], id: "endpoint_id" },
  { name: webhookStreams.deliveries, schema: WebhookEvent, first: "WebhookDeliveryAttempted", then: ["WebhookDeliveryAttempted"], id: "endpoint_id" },
];

/** Why this release cannot read the event at its place in a stream of this kind, or null. */
function whyNot(kind: StreamKind, e: RecordedEvent): string | null {
  const { type, version, data } = upcast(e);
  if (!KNOWN.has(type)) return "a type it does not know";
  const allowed = e.revision === 0 ? [kind.first] : kind.then;
  if (!allowed.includes(type)) return allowed.length ? `the stream holds ${allowed.join(" or ")} there` : `the stream holds its ${kind.first} alone`;
  const parsed = kind.schema.safeParse({ type, version, data });
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return `${issue.path.length ? `${issue.path.join(".")}: ` : ""}${issue.message}`;
  }
  const id = (data as Record<string, unknown>)[kind.id];
  if (id !== undefined && kind.name(String(id)) !== e.stream) return `its ${kind.id} ${JSON.stringify(id)} is another stream's`;
  return null;
}

/** An `invalid_event` finding for each event of the stream this release cannot read. */
export function invalidEvents(events: readonly RecordedEvent[]): Finding[] {
  const stream = events[0]?.stream;
  const kind = stream === undefined ? undefined : KINDS.find((k) => stream.startsWith(k.name("")));
  if (!kind) return [];
  return events.flatMap((e): Finding[] => {
    const why = whyNot(kind, e);
    return why === null ? [] : [{ kind: "invalid_event", subject: e.stream, event_id: e.id, revision: e.revision, message: `${e.type} version ${e.version} at revision ${e.revision} of ${e.stream} is not an event this release reads (${why})` }];
  });
}
