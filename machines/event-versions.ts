// Event schema versions: every version each event type ever had, and the upcasters between them.
// Stored events are never rewritten; an event read at an earlier version is upcast, on read, to
// the current one, one version at a time, by pure functions. The stores call `upcast` where a
// stored row becomes an event, so the fold, the projections and the audit only ever see current
// versions. The hash chain covers the stored bytes: `storedFormOf` gives them back for verifying
// and exporting.
//
// To change an event's data (machines/events.ts):
//   1. give its schema there the next version: eventSchema("PaymentRefunded", newData, 2);
//   2. keep the previous one here, with the upcaster from it:
//        PaymentRefunded: [{ schema: eventSchema("PaymentRefunded", oldData), upcast: (d) => ({ ...d, new_field: null }) }],
//   3. `npm run event-fingerprints` records the new version's fingerprint (it never changes a recorded one).
// test/machines/event-versions.test.ts fails, naming the event, when a schema changes under the same
// version, and runs every upcaster over the golden streams of test/fixtures/streams/.
import { createHash } from "node:crypto";
import { z } from "zod";
import { ApiKeyIssuedData1, DomainEvent, eventSchema, PaymentIntentCreatedData1, TransactionReferenceGivenData1, WebhookEvent } from "./events.js";

/** An earlier version of an event's schema and the upcaster from its data to the next version's. */
export interface EarlierVersion {
  schema: z.ZodObject;
  upcast(data: any): unknown;
}

/** Earlier versions per event type, oldest first (versions 1, 2, ... up to the current one's predecessor). */
export const EARLIER_VERSIONS: Readonly<Record<string, readonly EarlierVersion[]>> = {
  // v2 (issue 25): the key's prefix and an optional expiry; keys issued before have neither
  ApiKeyIssued: [{ schema: eventSchema("ApiKeyIssued", ApiKeyIssuedData1), upcast: (d) => ({ ...d, prefix: null, expires_at: null }) }],
  // v2: the reference may be null (a refused attempt's reference given back); every v1 reference is one
  TransactionReferenceGiven: [{ schema: eventSchema("TransactionReferenceGiven", TransactionReferenceGivenData1), upcast: (d) => d }],
  // v1's false was also "not sent": kept as null, so a customer on the intent still lets its card be saved
  PaymentIntentCreated: [{ schema: eventSchema("PaymentIntentCreated", PaymentIntentCreatedData1), upcast: (d) => ({ ...d, allow_saving_card: d.allow_saving_card === true ? true : null }) }],
};

/** The current schema of every stored event type (payment, account, terminal, API key and webhook streams). */
export const CURRENT_SCHEMAS: readonly z.ZodObject[] = [...DomainEvent.options, ...WebhookEvent.options];

export interface EventVersions {
  type: string;
  current: number;
  /** Every version's schema, by version (1..current). */
  schemas: ReadonlyMap<number, z.ZodObject>;
  /** version n -> the upcaster from n to n + 1 (n < current). */
  upcasters: ReadonlyMap<number, (data: any) => unknown>;
}

export type EventRegistry = ReadonlyMap<string, EventVersions>;

const literal = (schema: z.ZodObject, key: "type" | "version") => (schema.shape[key] as unknown as { value: string | number }).value;

/** The registry of schemas and upcasters; throws when the versions of a type do not run 1, 2, ... current. */
export function createEventRegistry(current: readonly z.ZodObject[] = CURRENT_SCHEMAS, earlier: Readonly<Record<string, readonly EarlierVersion[]>> = EARLIER_VERSIONS): EventRegistry {
  const registry = new Map<string, EventVersions>();
  for (const schema of current) {
    const type = literal(schema, "type") as string;
    const history = earlier[type] ?? [];
    const schemas = new Map<number, z.ZodObject>();
    const upcasters = new Map<number, (data: any) => unknown>();
    history.forEach((v, i) => {
      if (literal(v.schema, "type") !== type || literal(v.schema, "version") !== i + 1) throw new Error(`${type}: earlier version ${i + 1} has the schema of ${String(literal(v.schema, "type"))} v${String(literal(v.schema, "version"))}`);
      schemas.set(i + 1, v.schema);
      upcasters.set(i + 1, v.upcast);
    });
    const version = literal(schema, "version") as number;
    if (version !== history.length + 1) throw new Error(`${type}: current version ${version} but ${history.length} earlier version(s): versions run 1, 2, ... with an upcaster from each to the next`);
    schemas.set(version, schema);
    registry.set(type, { type, current: version, schemas, upcasters });
  }
  for (const type of Object.keys(earlier)) if (!registry.has(type)) throw new Error(`${type}: earlier versions of an event with no current schema`);
  return registry;
}

export const EVENT_REGISTRY: EventRegistry = createEventRegistry();

/** The stored form of an upcast event (version and data as stored), on a key JSON never writes. */
const STORED = Symbol("cardflow.stored");
type Versioned = { type: string; version: number; data: unknown };

/**
 * An upcaster over a registry: an event at an earlier version comes back as a new object at the
 * current version (the input is not touched); a current event, an unknown type or a version the
 * registry does not know (written by a later release) comes back as it is. So does an event that
 * is not valid at the version it claims (a v1 reference that v1 did not allow): upcast, a later
 * version's schema might take it; as it is, the validation after (import, audit, fold) refuses it.
 */
export function upcaster(registry: EventRegistry) {
  return <E extends Versioned>(event: E): E => {
    const versions = registry.get(event.type);
    if (!versions || event.version >= versions.current || event.version < 1) return event;
    if (!versions.schemas.get(event.version)!.safeParse({ type: event.type, version: event.version, data: event.data }).success) return event;
    let data = event.data;
    for (let v = event.version; v < versions.current; v++) data = versions.upcasters.get(v)!(data);
    return { ...event, version: versions.current, data, [STORED]: storedFormOf(event) };
  };
}

/** Upcasts a stored event to the current version of its type (the stores call it on every read). */
export const upcast = upcaster(EVENT_REGISTRY);

/**
 * The event as it is stored (what its hash covers, what an export writes): itself unless it was
 * upcast. The stored form travels with the upcast event on a symbol key: a spread copy keeps it, a
 * JSON or structuredClone copy does not (verify and export what the store returned).
 */
export function storedFormOf<E extends Versioned>(event: E): E {
  const stored = (event as E & { [STORED]?: { version: number; data: unknown } })[STORED];
  if (!stored) return event;
  const { [STORED]: _upcast, ...rest } = event as E & { [STORED]?: unknown };
  return { ...rest, version: stored.version, data: stored.data } as unknown as E;
}

/** Keys of a JSON schema that document and do not constrain: a changed comment is not a new version. */
const PROSE = new Set(["description", "title", "examples", "$schema"]);
const withoutProse = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(withoutProse)
    : value !== null && typeof value === "object"
      ? Object.fromEntries(Object.entries(value).filter(([k]) => !PROSE.has(k)).sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => [k, withoutProse(v)]))
      : value;

/** A schema's fingerprint: SHA-256 (first 16 hex digits) of its JSON Schema (z.toJSONSchema), prose left out, keys sorted. */
export function schemaFingerprint(schema: z.ZodType): string {
  const json = withoutProse(z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }));
  return createHash("sha256").update(JSON.stringify(json)).digest("hex").slice(0, 16);
}

/** Every version of every event type with its fingerprint: `Type@version` -> fingerprint (what machines/event-fingerprints.json records). */
export function registryFingerprints(registry: EventRegistry = EVENT_REGISTRY): Record<string, string> {
  const out: Record<string, string> = {};
  for (const { type, schemas } of [...registry.values()].sort((a, b) => (a.type < b.type ? -1 : 1))) {
    for (const [version, schema] of [...schemas].sort(([a], [b]) => a - b)) out[`${type}@${version}`] = schemaFingerprint(schema);
  }
  return out;
}

/**
 * How the fingerprints of a registry compare with recorded ones, one line per problem naming the
 * event: `changed:` a schema changed under a recorded version, `removed:` a recorded version is
 * gone (stored events may still have it), `new:` a version not recorded yet.
 */
export function fingerprintProblems(recorded: Readonly<Record<string, string>>, current: Readonly<Record<string, string>> = registryFingerprints()): string[] {
  const problems: string[] = [];
  for (const [key, print] of Object.entries(current)) {
    const [type, version] = key.split("@") as [string, string];
    const was = recorded[key];
    if (was === undefined) problems.push(`new: ${type} version ${version} has no recorded fingerprint (npm run event-fingerprints)`);
    else if (was !== print)
      problems.push(`changed: ${type} version ${version}: its schema changed without a new version (fingerprint ${was} -> ${print}); give it version ${Number(version) + 1} and keep version ${version} with an upcaster in machines/event-versions.ts`);
  }
  for (const key of Object.keys(recorded)) if (!(key in current)) problems.push(`removed: ${key.replace("@", " version ")} is recorded but no longer in the registry: stored events may have it; keep its schema and upcaster`);
  return problems;
}
