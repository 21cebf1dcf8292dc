// Moving streams between stores (SQLite <-> PostgreSQL, or into a test store): JSONL, one stored
// event per line with everything the store returned, in its stored form (never upcast), so nothing
// is lost. Import verifies before it writes: every stream's revisions run from 0, its hash chain is
// intact and (payment streams) every transition is one the machine allows; one bad stream refuses
// the whole file and nothing is appended. Events are appended in their original global order, as
// stored, so projections see what they saw.
import { z } from "zod";
import { storedFormOf, upcast } from "../../machines/event-versions.js";
import { InvalidRequest, NotFound } from "../errors.js";
import { auditReplay } from "./machine-history.js";
import type { EventStore, RecordedEvent } from "../store/port.js";
import { verifyChain } from "./chain.js";
import { invalidEvents } from "./stream-events.js";
import { batchesOf, PAGE_SIZE, paymentIdOf } from "./source.js";
import { REQUEST_ID_SEQUENCE } from "../ids.js";

/** The shape of one exported line (what the store returned for an event). */
const ExportedEvent = z.object({
  stream: z.string().min(1),
  revision: z.number().int().min(0),
  position: z.number().int().min(1),
  id: z.string().min(1),
  type: z.string().min(1),
  version: z.number().int(),
  data: z.unknown(),
  metadata: z.looseObject({ timestamp: z.string(), request_id: z.number() }),
});

/** One exported line as an event, or the problem with it (naming the line and the field). */
export function parseLine(raw: string, n: number): RecordedEvent | string {
  let json: unknown;
  try {
    json = JSON.parse(n === 1 ? raw.replace(/^\uFEFF/, "") : raw); // a byte order mark an editor saved
  } catch {
    return `line ${n}: not JSON`;
  }
  const parsed = ExportedEvent.safeParse(json);
  if (parsed.success) return parsed.data as RecordedEvent;
  return `line ${n}: ${parsed.error.issues.map((i) => `${i.path.join(".") || "(event)"}: ${i.message}`).join("; ")}`;
}

/** One JSONL line per event: a whole store in global order, or one payment's stream. */
export async function* exportEvents(store: EventStore, { paymentId }: { paymentId?: string } = {}): AsyncGenerator<string> {
  // as stored: the version and data the hash covers, never an upcast form
  const line = (e: RecordedEvent) => {
    const { stream, revision, position, id, type, version, data, metadata } = storedFormOf(e);
    return JSON.stringify({ stream, revision, position, id, type, version, data, metadata });
  };
  if (paymentId !== undefined) {
    const stream = await store.readStream(`payment-${paymentId}`);
    if (stream.length === 0) throw new NotFound("payment", paymentId, "payment_id", "in the store");
    for (const e of stream) yield line(e);
    return;
  }
  for await (const batch of batchesOf(store)) for (const e of batch) yield line(e);
}

export class ImportRefused extends InvalidRequest {
  constructor(readonly problems: string[]) {
    super(`import refused, nothing was appended:\n  ${problems.join("\n  ")}`, "events", "import_refused");
  }
}

export interface ImportResult {
  /** Streams it appended to. */
  streams: number;
  /** The file's events. */
  events: number;
  /** Of those events, how many the store had already (an import run again appends nothing). */
  already: number;
}

/** Parses and verifies JSONL, then appends it; throws ImportRefused (nothing appended) on any problem. */
export async function importEvents(store: EventStore, lines: Iterable<string> | AsyncIterable<string>): Promise<ImportResult> {
  const events: RecordedEvent[] = [];
  const problems: string[] = [];
  /** Where each event is, by id: an export holds each event once (one repeated is said as such, not as the gaps it makes in its stream). */
  const seen = new Map<string, { line: number; at: string }>();
  let n = 0;
  for await (const raw of lines) {
    n++;
    if (raw.trim() === "") continue;
    const parsed = parseLine(raw, n);
    if (typeof parsed === "string") {
      problems.push(parsed);
      continue;
    }
    const at = `${parsed.stream}@${parsed.revision}`;
    const before = seen.get(parsed.id);
    if (before?.at === at) {
      problems.push(`line ${n}: event ${parsed.id} (${at}) again: line ${before.line} holds it, and an export holds each event once`);
      continue;
    }
    seen.set(parsed.id, { line: n, at });
    events.push(parsed);
  }
  if (problems.length) throw new ImportRefused(problems);

  events.sort((a, b) => a.position - b.position);
  /** Of each stream, how many of its first events the store holds already (the same ones). */
  const held = new Map<string, number>();
  const byStream = new Map<string, RecordedEvent[]>();
  for (const e of events) {
    const list = byStream.get(e.stream);
    if (list) list.push(e);
    else byStream.set(e.stream, [e]);
  }
  for (const [stream, list] of byStream) {
    list.sort((a, b) => a.revision - b.revision);
    list.forEach((e, i) => e.revision !== i && problems.push(`${stream}: revision ${e.revision} where ${i} was expected (incomplete stream)`));
    // a stream's revisions were appended in the store's order: one at a position before its predecessor's was moved (the audit's "reordered"); appended by position, it would be renumbered
    list.forEach((e, i) => i > 0 && e.position <= list[i - 1]!.position && problems.push(`${stream}: reordered: revision ${e.revision} is at position ${e.position}, not after revision ${i - 1}'s ${list[i - 1]!.position} (a stream's events are in the order they were appended)`));
    for (const f of verifyChain(list)) problems.push(`${stream}: ${f.kind}: ${f.message}`);
    if (paymentIdOf(stream) !== null) for (const s of auditReplay(list.map(upcast)).illegal) problems.push(`${stream}: ${s.refusal!.kind.replace("_", " ")}: ${s.type} at revision ${s.revision} is refused: ${s.refusal!.message}`);
    else for (const f of invalidEvents(list)) problems.push(`${stream}: invalid event: ${f.message}`);
    // a stream the store holds already must hold exactly the file's events where both have them
    // (imported before: only the file's events past the store's are appended); one that differs anywhere is another history
    const existing = (await store.readStream(stream)).slice(0, list.length);
    // the stored events checked against their own hashes too: one edited by hand keeps the hash it had
    const edited = verifyChain(existing).find((f) => f.kind === "edited")?.revision ?? -1;
    const differs = existing.findIndex((e, i) => e.id !== list[i]!.id || e.metadata.hash !== list[i]!.metadata.hash || e.revision === edited);
    if (differs >= 0) problems.push(`${stream}: already exists in the target store with other events (from revision ${differs})`);
    else held.set(stream, existing.length);
  }
  if (problems.length) throw new ImportRefused(problems);
  const appended = events.filter((e) => e.revision >= held.get(e.stream)!);
  // every check before the first append: the store appends one stream at a time
  problems.push(...(await idsTaken(store, appended)));
  if (problems.length) throw new ImportRefused(problems);

  // consecutive events of one stream go in one append, as they were most likely appended
  const done = { events: 0, streams: new Set<string>() };
  for (let i = 0; i < appended.length; ) {
    let j = i + 1;
    while (j < appended.length && appended[j]!.stream === appended[i]!.stream) j++;
    const group = appended.slice(i, j);
    const first = group[0]!;
    try {
      await store.append(
        first.stream,
        group.map(({ id, type, version, data, metadata }) => ({ id, type, version, data, metadata })),
        { expectedRevision: first.revision === 0 ? "no_stream" : first.revision - 1 },
      );
    } catch (error) {
      // verified above: another writer got there in between (the store appends one stream at a time)
      const soFar = done.events ? `${done.events} of the file's events were appended (to ${done.streams.size} stream(s)), the rest were not` : "nothing was appended";
      throw new Error(`import stopped: ${(error as Error).message}; ${soFar}`, { cause: error });
    }
    done.events += group.length;
    done.streams.add(first.stream);
    i = j;
  }
  // request ids go on past the imported events' (one counter per store: src/ids.ts)
  // (a loop, not Math.max(...): an export of millions of events is more arguments than a call takes)
  const highest = events.reduce((most, e) => Math.max(most, e.metadata.request_id), 0);
  const next = await store.reserveIds(REQUEST_ID_SEQUENCE, 0);
  if (next <= highest) await store.reserveIds(REQUEST_ID_SEQUENCE, highest + 1 - next);
  return { streams: done.streams.size, events: events.length, already: events.length - appended.length };
}

/** Problems with the ids of the events to append: one the file holds twice, or one the store holds (in another stream: the same stream's were compared above). */
async function idsTaken(store: EventStore, appended: readonly RecordedEvent[]): Promise<string[]> {
  const problems: string[] = [];
  const streamOf = new Map<string, string>();
  for (const e of appended) {
    const other = streamOf.get(e.id);
    if (other !== undefined) problems.push(`${e.stream}: event id ${e.id} is also the id of an event of ${other} in the file`);
    else streamOf.set(e.id, e.stream);
  }
  if (streamOf.size === 0 || (await store.head()) === 0) return problems;
  // the port looks events up by stream, not by id: the store is read once, a page at a time
  for await (const page of batchesOf(store, PAGE_SIZE, () => undefined /* an unreadable event's id is not known */)) {
    for (const e of page) {
      const stream = streamOf.get(e.id);
      if (stream !== undefined) problems.push(`${stream}: event id ${e.id} is already stored in stream ${e.stream}`);
    }
  }
  return problems;
}
