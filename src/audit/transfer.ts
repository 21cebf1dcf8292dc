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
import { batchesOf, paymentIdOf } from "./source.js";

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
    json = JSON.parse(raw);
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
    if (stream.length === 0) throw new NotFound("payment", paymentId, "payment_id");
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
  streams: number;
  events: number;
  /** Of those events, how many the store had already (an import run again appends nothing). */
  already: number;
}

/** Parses and verifies JSONL, then appends it; throws ImportRefused (nothing appended) on any problem. */
export async function importEvents(store: EventStore, lines: Iterable<string> | AsyncIterable<string>): Promise<ImportResult> {
  const events: RecordedEvent[] = [];
  const problems: string[] = [];
  let n = 0;
  for await (const raw of lines) {
    n++;
    if (raw.trim() === "") continue;
    const parsed = parseLine(raw, n);
    if (typeof parsed === "string") problems.push(parsed);
    else events.push(parsed);
  }
  if (problems.length) throw new ImportRefused(problems);

  events.sort((a, b) => a.position - b.position);
  let already = 0;
  const byStream = new Map<string, RecordedEvent[]>();
  for (const e of events) byStream.set(e.stream, [...(byStream.get(e.stream) ?? []), e]);
  for (const [stream, list] of byStream) {
    list.sort((a, b) => a.revision - b.revision);
    list.forEach((e, i) => e.revision !== i && problems.push(`${stream}: revision ${e.revision} where ${i} was expected (incomplete stream)`));
    for (const f of verifyChain(list)) problems.push(`${stream}: ${f.kind}: ${f.message}`);
    if (paymentIdOf(stream) !== null) for (const s of auditReplay(list.map(upcast)).illegal) problems.push(`${stream}: ${s.refusal!.kind.replace("_", " ")}: ${s.type} at revision ${s.revision} is refused: ${s.refusal!.message}`);
    // a stream the store holds already must hold exactly the file's events where both have them
    // (imported before: appending them again stores nothing); one that differs anywhere is another history
    const existing = await store.readStream(stream);
    const differs = existing.slice(0, list.length).findIndex((e, i) => e.id !== list[i]!.id || e.metadata.hash !== list[i]!.metadata.hash);
    if (differs >= 0) problems.push(`${stream}: already exists in the target store with other events (from revision ${differs})`);
    else already += Math.min(list.length, existing.length);
  }
  if (problems.length) throw new ImportRefused(problems);

  // consecutive events of one stream go in one append, as they were most likely appended
  for (let i = 0; i < events.length; ) {
    let j = i + 1;
    while (j < events.length && events[j]!.stream === events[i]!.stream) j++;
    const group = events.slice(i, j);
    const first = group[0]!;
    await store.append(
      first.stream,
      group.map(({ id, type, version, data, metadata }) => ({ id, type, version, data, metadata })),
      { expectedRevision: first.revision === 0 ? "no_stream" : first.revision - 1 },
    );
    i = j;
  }
  return { streams: byStream.size, events: events.length, already };
}
