// Audits: explain and verify what happened to payments. `audit` gives one payment's timeline
// (time, request, actor, status before -> after, amounts after) with its hash chain verified, its
// transitions checked against the machine, and its stored read models compared with a fresh fold;
// `auditAll` does the same for every stream of a store. Findings are named, never thrown.
import { streams as streamNames } from "../../machines/events.js";
import type { PaymentState } from "../../machines/fold.js";
import { paymentRecord } from "../present/payment-record.js";
import type { Projection } from "../../projections/projection.js";
import { paymentDeliveriesProjection, type DeliveriesDoc, type DeliveryEntry } from "../../projections/payment-deliveries.js";
import { PROJECTIONS } from "../../projections/registry.js";
import { NotFound } from "../errors.js";
import type { EventStore, ReadModelStore, RecordedEvent, UnreadableEvent } from "../store/port.js";
import { headOf } from "../events/chain.js";
import { checkAnchors } from "./anchors.js";
import { isRefusal, type Anchors, type Finding, type PaymentAudit, type StoreAudit } from "./findings.js";
import { checkOtherStream, checkPaymentStream } from "./payment-stream.js";
import { applyAsAllowed, compareDocuments, foldProjections, readModelsAhead, readModelsBehind, readModelVerdict, type JoinedReadModels } from "./read-models.js";
import { batchesOf, lastPosition, PAGE_SIZE, paymentIdOf, readableStream, type AuditSource, type OnProgress } from "./source.js";

export { streamHeads } from "./anchors.js";
export type { Anchors, Finding, FindingKind, PaymentAudit, StoreAudit, TimelineRow } from "./findings.js";

/** A delivery row (src/webhooks/delivery-records.ts, one per endpoint and event, updated per attempt), as the timeline lists it. */
/** The payment's rows of the webhook deliveries table (src/webhooks/delivery-records.ts), by its payment index; none when the store has no such table. */
async function deliveryRows(readModels: AuditSource["readModels"], paymentId: string): Promise<DeliveryRow[]> {
  if (!readModels) return [];
  return readModels.query<DeliveryRow>("webhook_deliveries", { where: { payment_id: paymentId }, order: ["key"], direction: "asc", limit: 1_000 }).catch((error: unknown) => {
    // a store where no process delivered since the table exists: no rows
    if (error instanceof Error && error.message.endsWith("is not a table")) return [];
    throw error;
  });
}
type DeliveryRow = Omit<DeliveryEntry, "event_id" | "attempt" | "position" | "timestamp"> & { id: string; attempts: number; last_attempt_at: string };
const asEntry = ({ id, attempts, last_attempt_at, endpoint_id, event_type, sequence, delivered, status_code, error, duration_ms, next_attempt_at }: DeliveryRow): DeliveryEntry =>
  ({ endpoint_id, event_id: id, event_type, sequence, attempt: attempts, delivered, status_code, error, duration_ms, next_attempt_at, position: 0, timestamp: last_attempt_at });

/**
 * A stream's events up to the first that cannot be read, and an `unreadable` finding for each that
 * cannot: a chain or a fold past a missing event has no right answer, so the events after it are
 * not checked (and the stream's read models not compared).
 */
async function readUpToUnreadable(store: EventStore, stream: string): Promise<{ events: RecordedEvent[]; unreadable: Finding[] }> {
  const failed: UnreadableEvent[] = [];
  const events = await readableStream(store, stream, (e) => failed.push(e));
  const first = failed[0]?.event.revision ?? Infinity;
  const unchecked = events.filter((e) => e.revision > first).length;
  const unreadable = failed.map((e, i): Finding => ({ kind: "unreadable", subject: stream, event_id: e.event.id, revision: e.event.revision, message: i > 0 || !unchecked ? e.message : `${e.message}; the ${unchecked} readable event(s) after it are not checked` }));
  return { events: events.filter((e) => e.revision < first), unreadable };
}

/** `anchors`: head hashes saved earlier (`streamHeads`); the payment's streams among them must still hold theirs. */
export async function audit(source: AuditSource, paymentId: string, { anchors }: { anchors?: Anchors } = {}): Promise<PaymentAudit> {
  const stream = streamNames.payment(paymentId);
  const { events, unreadable } = await readUpToUnreadable(source.store, stream);
  if (events.length === 0 && unreadable.length === 0) throw new NotFound("payment", paymentId, "payment_id", "in the store");
  const { timeline, final, findings, foldable, asAllowed } = checkPaymentStream(events, source.machines);
  findings.unshift(...unreadable);
  // what the processor did that the payment does not show (its late answers it did not take)
  const lateAnswers = await readUpToUnreadable(source.store, streamNames.lateAnswers(paymentId));
  findings.push(...lateAnswers.unreadable, ...checkOtherStream(lateAnswers.events));
  const read = new Map([[stream, events], [streamNames.lateAnswers(paymentId), lateAnswers.events]]);
  const cut = new Set([...(unreadable.length ? [stream] : []), ...(lateAnswers.unreadable.length ? [streamNames.lateAnswers(paymentId)] : [])]);
  const mine = Object.fromEntries(Object.entries(anchors ?? {}).filter(([s]) => read.has(s)));
  const anchorFindings = checkAnchors(read, mine, cut);
  findings.push(...anchorFindings);
  const compared = source.readModels !== undefined && foldable && unreadable.length === 0 && !findings.some(isRefusal);
  if (compared) {
    const fresh = foldProjections(events, PROJECTIONS, asAllowed);
    const behind = await readModelsBehind(source.readModels!, fresh.keys(), Math.max(...events.map((e) => e.position)));
    for (const f of behind) fresh.delete(f.subject.slice("read_model:".length));
    findings.push(...behind, ...(await compareDocuments(source.readModels!, fresh, PROJECTIONS)));
  }
  const lastRequest = events.at(-1)?.metadata.request_id ?? 0;
  return {
    payment_id: paymentId,
    stream,
    timeline,
    final,
    record: final.status === "none" ? null : paymentRecord(final, lastRequest),
    head_hash: headOf(events),
    read_models: readModelVerdict(compared, findings),
    // how many heads were looked for: a heads file without this payment's streams checks nothing
    ...(anchors && { anchors: { given: Object.keys(anchors).length, checked: Object.keys(mine).length, held: Object.keys(mine).length - anchorFindings.length } }),
    findings,
    // attempts recorded as events before (payment_deliveries), then the delivery rows kept since (operational state)
    deliveries: [
      ...((await source.readModels?.get<DeliveriesDoc>(paymentDeliveriesProjection.name, paymentId))?.deliveries ?? []),
      ...(await deliveryRows(source.readModels, paymentId)).map(asEntry),
    ],
  };
}

/**
 * Every stream of the store: chains intact, transitions legal, amounts within their invariants,
 * and (with read models) every document equal to a fresh replay, and none that no event explains;
 * the webhook feed's documents too where the store keeps a feed (each one stream's: folded in (2)).
 * A fresh replay folds an event only an earlier machine allowed as that machine did (what the audit
 * establishes). The documents a stream writes that does not replay legally are not compared (a fold
 * of an illegal stream has no right answer); every other document still is.
 *
 * Memory stays bounded by a page of events and one stream, not by the store: (1) the events are
 * read once in global order, a page at a time, to learn the streams and which stream writes each
 * read-model document; (2) each stream is read and verified on its own, and the documents only it
 * writes are folded and compared then; (3) documents written by several streams (none, for the
 * projections of this repository) are folded in one more paged pass. What is kept across the
 * store is per stream or per document: names, keys, findings.
 */
export async function auditAll(source: AuditSource, { onProgress, anchors: given, pageSize = PAGE_SIZE, projections = PROJECTIONS, feed }: AuditAllOptions = {}): Promise<StoreAudit> {
  const { store, readModels } = source;
  const anchors = given ?? {};
  const last = await lastPosition(store);

  // (1) streams, and the stream that writes each document (null: more than one)
  const streams = new Set<string>();
  const writers = new Map(projections.map((p) => [p.name, new Map<string, string | null>()]));
  let events = 0;
  // an event that cannot be read is counted and its stream verified; it is reported with its stream
  const noteUnreadable = ({ event }: UnreadableEvent) => void (events++, streams.add(event.stream));
  for await (const page of batchesOf(store, pageSize, noteUnreadable)) {
    for (const e of page) {
      events++;
      streams.add(e.stream);
      for (const p of projections) {
        const key = p.keyOf(e);
        if (key === null) continue;
        const byKey = writers.get(p.name)!;
        const writer = byKey.get(key);
        if (writer === undefined) byKey.set(key, e.stream);
        else if (writer !== e.stream) byKey.set(key, null);
      }
    }
    onProgress?.({ phase: "reading events", done: page[page.length - 1]!.position, total: last, unit: "events" });
  }

  const findings: Finding[] = [];
  const readModelFindings: Finding[] = [];
  // a read model behind the events is reported as such, and its documents are not compared
  const comparable = new Set<string>();
  // the webhook feed's too, where the store keeps one (its documents are each one stream's: (2))
  const feedNames = readModels && feed && (await feed.kept(readModels)) ? feed.names : [];
  if (readModels) {
    const names = [...projections.map((p) => p.name), ...feedNames];
    readModelFindings.push(...(await readModelsBehind(readModels, names, last)), ...(await readModelsAhead(readModels, names, last)));
    for (const name of names) if (!readModelFindings.some((f) => f.subject === `read_model:${name}`)) comparable.add(name);
  }
  const feedCompared = feedNames.length > 0 && feedNames.every((name) => comparable.has(name));
  /** The feed's keys the compared streams explain. */
  const feedKeys = new Map(feedNames.map((name) => [name, new Set<string>()]));

  // (2) each stream on its own
  let payments = 0;
  let done = 0;
  // a stream with an event no machine allowed, or one that cannot be read, has no fresh read models:
  // its documents are not compared; every other stream's still are, an event only an earlier
  // machine allowed folded as that machine did (asAllowed, kept for the shared documents of (3))
  const unfoldable = new Set<string>();
  const asAllowed = new Map<number, PaymentState>();
  const machineVersions: Record<string, number> = {};
  const allowedByEarlier: StoreAudit["allowed_by_earlier_machines"] = [];
  for (const stream of streams) {
    // by revision, as audit() and the service read a stream (events stored in another order than
    // their links say show as reordered)
    const read = await readUpToUnreadable(store, stream);
    const streamEvents = read.events;
    findings.push(...read.unreadable);
    let foldable = read.unreadable.length === 0;
    if (paymentIdOf(stream) === null) {
      const checked = checkOtherStream(streamEvents);
      findings.push(...checked);
      // a projection would fold what this release cannot read
      foldable &&= !checked.some((f) => f.kind === "invalid_event");
    } else {
      payments++;
      const checked = checkPaymentStream(streamEvents, source.machines);
      findings.push(...checked.findings);
      foldable &&= checked.foldable && !checked.findings.some(isRefusal);
      for (const [position, state] of checked.asAllowed) asAllowed.set(position, state);
      for (const row of checked.timeline) {
        const version = row.machine_version ?? "before_machine_versions";
        machineVersions[version] = (machineVersions[version] ?? 0) + 1;
        if (row.allowed_by_machine) allowedByEarlier.push({ stream, revision: row.revision, type: row.type, machine_version: row.allowed_by_machine });
      }
    }
    if (!foldable) unfoldable.add(stream);
    if (stream in anchors) findings.push(...checkAnchors(new Map([[stream, streamEvents]]), { [stream]: anchors[stream]! }, new Set(read.unreadable.length ? [stream] : [])));
    if (readModels && comparable.size && foldable) {
      const owned = projections.filter((p) => comparable.has(p.name));
      const fresh = foldProjections(streamEvents, owned, asAllowed);
      for (const [name, docs] of fresh) for (const key of docs.keys()) if (writers.get(name)!.get(key) !== stream) docs.delete(key);
      readModelFindings.push(...(await compareDocuments(readModels, fresh, projections)));
    }
    if (readModels && feed && feedCompared && foldable) {
      const fresh = feed.foldStream(streamEvents, asAllowed);
      for (const [name, docs] of fresh) for (const key of docs.keys()) feedKeys.get(name)!.add(key);
      readModelFindings.push(...(await compareDocuments(readModels, fresh, feed.tables)));
    }
    onProgress?.({ phase: "verifying streams", done: ++done, total: streams.size, unit: "streams" });
  }
  findings.push(...checkAnchors(new Map(), Object.fromEntries(Object.entries(anchors).filter(([stream]) => !streams.has(stream)))));
  // said in the summary: how many heads were checked, so a heads file that anchors nothing cannot pass for a clean one
  const anchored = Object.keys(anchors);
  const anchorsChecked = { checked: anchored.length, held: anchored.length - findings.filter((f) => f.kind === "anchor_missing").length, streams_not_in_store: anchored.filter((s) => !streams.has(s)).length };

  // (3) documents several streams write, folded in global order (but those an unfoldable stream writes)
  if (readModels) {
    const shared = new Map([...writers].filter(([name]) => comparable.has(name)).map(([name, byKey]) => [name, new Set([...byKey].filter(([, w]) => w === null).map(([k]) => k))]));
    if ([...shared.values()].some((keys) => keys.size > 0)) {
      const docs = new Map([...shared.keys()].map((name) => [name, new Map<string, unknown>()]));
      for await (const page of batchesOf(store, pageSize, () => undefined /* reported above */)) {
        for (const e of page) {
          for (const p of projections) {
            const key = p.keyOf(e);
            if (key === null || !shared.get(p.name)?.has(key)) continue;
            if (unfoldable.has(e.stream)) {
              shared.get(p.name)!.delete(key);
              docs.get(p.name)!.delete(key);
              continue;
            }
            docs.get(p.name)!.set(key, applyAsAllowed(p, docs.get(p.name)!.get(key), e, asAllowed));
          }
        }
        onProgress?.({ phase: "folding shared documents", done: page[page.length - 1]!.position, total: last, unit: "events" });
      }
      readModelFindings.push(...(await compareDocuments(readModels, docs, projections)));
    }
    // documents no event explains (counted first: their keys are read only when there are some); the
    // feed's once every stream was folded into all three (else some of its documents are not known)
    for (const name of comparable) {
      const known = writers.get(name) ?? feedKeys.get(name)!;
      if (!writers.has(name) && (unfoldable.size > 0 || !feedCompared)) continue;
      if ((await readModels.count(name)) <= known.size) continue;
      const { count, first } = await keysNotIn(readModels, name, known, pageSize);
      const shown = first.join(", ") + (count > first.length ? ` and ${count - first.length} more` : "");
      readModelFindings.push({ kind: "read_model_mismatch", subject: `read_model:${name}`, message: `read model ${name} has ${count} document(s) no event explains: ${shown}` });
    }
  }

  findings.push(...readModelFindings);
  // "equal" only when every stream's documents were compared; a difference found elsewhere is still one
  const verdict = readModels === undefined ? "not_compared" : readModelFindings.length ? "differ" : unfoldable.size ? "not_compared" : "equal";
  return { streams: streams.size, payments, events, read_models: verdict, ...(unfoldable.size ? { read_models_not_compared: unfoldable.size } : {}), machine_versions: machineVersions, allowed_by_earlier_machines: allowedByEarlier, ...(given && { anchors: anchorsChecked }), findings };
}

/** How many of a read model's keys are not among `known`, and the first five (keys read a page at a time). */
async function keysNotIn(readModels: ReadModelStore, name: string, known: { has(key: string): boolean }, pageSize: number) {
  let count = 0;
  const first: string[] = [];
  for (let after = ""; ; ) {
    const keys = await readModels.keys(name, "", { after, limit: pageSize });
    for (const key of keys.filter((k) => !known.has(k))) if (++count <= 5) first.push(key);
    if (keys.length < pageSize) return { count, first };
    after = keys[keys.length - 1]!;
  }
}

export interface AuditAllOptions {
  onProgress?: OnProgress;
  anchors?: Anchors;
  /** Events per read (the memory bound of the reads). */
  pageSize?: number;
  projections?: readonly Projection<any>[];
  /** The webhook feed's read models, compared too where the store keeps them (src/webhooks/feed-audit.ts). */
  feed?: JoinedReadModels;
}

