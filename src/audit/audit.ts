// Audits: explain and verify what happened to payments. `audit` gives one payment's timeline
// (time, request, actor, status before -> after, amounts after) with its hash chain verified, its
// transitions checked against the machine, and its stored read models compared with a fresh fold;
// `auditAll` does the same for every stream of a store. Findings are named, never thrown.
import { streams as streamNames } from "../../machines/events.js";
import type { PaymentState } from "../../machines/fold.js";
import { paymentRecord, type PaymentRecord } from "../present/payment-record.js";
import type { Projection } from "../../projections/projection.js";
import { paymentDeliveriesProjection, type DeliveriesDoc, type DeliveryEntry } from "../../projections/payment-deliveries.js";
import { PROJECTIONS } from "../../projections/registry.js";
import { NotFound } from "../errors.js";
import { Decimal } from "../money.js";
import { replay } from "../replay.js";
import type { ReadModelStore, RecordedEvent } from "../store/port.js";
import { sameJson } from "../events/canonical-json.js";
import { headOf } from "../events/chain.js";
import { verifyChain, type ChainFindingKind } from "./chain.js";
import { batchesOf, lastPosition, PAGE_SIZE, paymentIdOf, type AuditSource, type OnProgress } from "./source.js";

export type FindingKind =
  | ChainFindingKind
  | "anchor_missing"
  | "illegal_transition"
  | "amount_invariant"
  | "read_model_mismatch"
  | "read_model_missing"
  | "read_model_behind";

/** Head hashes of streams recorded earlier, outside the store (`streamHeads`): stream -> hash. */
export type Anchors = Record<string, string>;

export interface Finding {
  kind: FindingKind;
  /** The stream, or `read_model:NAME` for a read-model finding. */
  subject: string;
  event_id?: string;
  revision?: number;
  message: string;
}

export interface TimelineRow {
  revision: number;
  position: number;
  event_id: string;
  type: string;
  timestamp: string;
  request_id: number;
  actor: string | null;
  /** The terminal or reader the payment was on after this event, if any. */
  terminal_id: string | null;
  idempotency_key: string | null;
  status_before: string;
  status_after: string;
  /** false: the machine would not have allowed this event (status unchanged). */
  allowed: boolean;
  amounts_after: { authorized: string; captured: string; refunded: string };
}

/** A delivery row (src/webhooks/delivery-records.ts, one per endpoint and event, updated per attempt), as the timeline lists it. */
type DeliveryRow = Omit<DeliveryEntry, "event_id" | "attempt" | "position" | "timestamp"> & { id: string; attempts: number; last_attempt_at: string };
const asEntry = ({ id, attempts, last_attempt_at, endpoint_id, event_type, sequence, delivered, status_code, error, duration_ms, next_attempt_at }: DeliveryRow): DeliveryEntry =>
  ({ endpoint_id, event_id: id, event_type, sequence, attempt: attempts, delivered, status_code, error, duration_ms, next_attempt_at, position: 0, timestamp: last_attempt_at });

export interface PaymentAudit {
  payment_id: string;
  stream: string;
  timeline: TimelineRow[];
  /** The state recomputed from the events. */
  final: PaymentState;
  record: PaymentRecord | null;
  /** The hash of the stream's last event: anchor it elsewhere to make truncation detectable. */
  head_hash: string | null;
  /** How the stored read models compare with a fresh fold of the events. */
  read_models: "equal" | "differ" | "not_compared";
  findings: Finding[];
  /** Attempts to deliver the payment's public events to webhook endpoints (from the payment_deliveries read model; empty without read models). */
  deliveries: DeliveryEntry[];
}

export interface StoreAudit {
  streams: number;
  payments: number;
  events: number;
  read_models: "equal" | "differ" | "not_compared";
  findings: Finding[];
}

/** Chain, transitions and amounts of one payment stream. */
function checkPaymentStream(events: readonly RecordedEvent[]) {
  const findings: Finding[] = verifyChain(events).map(({ kind, stream, event_id, revision, message }) => ({ kind, subject: stream, event_id, revision, message }));
  const report = replay(events);
  const timeline: TimelineRow[] = report.steps.map((step, i) => {
    const e = events[i]!;
    const { amount_authorized, amount_captured, amount_refunded } = step.state.context;
    const row: TimelineRow = {
      revision: e.revision,
      position: e.position,
      event_id: e.id,
      type: e.type,
      timestamp: e.metadata.timestamp,
      request_id: e.metadata.request_id,
      actor: e.metadata.actor ?? null,
      terminal_id: step.state.context.terminal?.terminal_id ?? null,
      idempotency_key: e.metadata.idempotency_key ?? null,
      status_before: step.status_before,
      status_after: step.state.status,
      allowed: step.allowed,
      amounts_after: { authorized: amount_authorized, captured: amount_captured, refunded: amount_refunded },
    };
    const at = { subject: e.stream, event_id: e.id, revision: e.revision };
    if (!step.allowed) findings.push({ kind: "illegal_transition", ...at, message: `${e.type} (${e.stream}@${e.revision}) is refused: ${step.refused}` });
    const [authorized, captured, refunded] = [amount_authorized, amount_captured, amount_refunded].map((v) => new Decimal(v));
    if (captured!.greaterThan(authorized!)) findings.push({ kind: "amount_invariant", ...at, message: `after ${e.type} (${e.stream}@${e.revision}) captured ${amount_captured} exceeds authorized ${amount_authorized}` });
    if (refunded!.greaterThan(captured!)) findings.push({ kind: "amount_invariant", ...at, message: `after ${e.type} (${e.stream}@${e.revision}) refunded ${amount_refunded} exceeds captured ${amount_captured}` });
    return row;
  });
  return { timeline, final: report.final, findings };
}

const checkOtherStream = (events: readonly RecordedEvent[]): Finding[] =>
  verifyChain(events).map(({ kind, stream, event_id, revision, message }) => ({ kind, subject: stream, event_id, revision, message }));

/** Fresh documents of every projection from these events (in global order). */
function foldProjections(events: Iterable<RecordedEvent>, projections: readonly Projection<any>[] = PROJECTIONS): Map<string, Map<string, unknown>> {
  const docs = new Map(projections.map((p) => [p.name, new Map<string, unknown>()]));
  for (const e of events) {
    for (const p of projections) {
      const key = p.keyOf(e);
      if (key === null) continue;
      const byKey = docs.get(p.name)!;
      byKey.set(key, p.apply(byKey.get(key), e));
    }
  }
  return docs;
}

/** Read models whose checkpoint is behind `lastPosition` (catch them up first: the projection runner's catchUp). */
async function readModelsBehind(readModels: ReadModelStore, names: Iterable<string>, lastPosition: number): Promise<Finding[]> {
  const findings: Finding[] = [];
  for (const name of names) {
    const checkpoint = await readModels.checkpoint(name);
    if (checkpoint < lastPosition) findings.push({ kind: "read_model_behind", subject: `read_model:${name}`, message: `read model ${name} is at position ${checkpoint}, the events reach ${lastPosition}` });
  }
  return findings;
}

/** Stored read-model documents against fresh ones (one read per projection). */
async function compareDocuments(readModels: ReadModelStore, fresh: Map<string, Map<string, unknown>>): Promise<Finding[]> {
  const findings: Finding[] = [];
  for (const [name, docs] of fresh) {
    if (docs.size === 0) continue;
    const subject = `read_model:${name}`;
    const stored = await readModels.getMany(name, [...docs.keys()]);
    for (const [key, doc] of docs) {
      const found = stored.get(key);
      if (found === undefined) findings.push({ kind: "read_model_missing", subject, message: `read model ${name} has no document ${key}` });
      else if (!sameJson(found, doc)) findings.push({ kind: "read_model_mismatch", subject, message: `read model ${name}: document ${key} differs from a fresh replay of its events` });
    }
  }
  return findings;
}

const readModelVerdict = (compared: boolean, findings: Finding[]) =>
  !compared ? "not_compared" : findings.some((f) => f.subject.startsWith("read_model:")) ? "differ" : "equal";

export async function audit(source: AuditSource, paymentId: string): Promise<PaymentAudit> {
  const stream = streamNames.payment(paymentId);
  const events = await source.store.readStream(stream);
  if (events.length === 0) throw new NotFound("payment", paymentId, "payment_id");
  const { timeline, final, findings } = checkPaymentStream(events);
  const legal = !findings.some((f) => f.kind === "illegal_transition");
  const compared = source.readModels !== undefined && legal;
  if (compared) {
    const fresh = foldProjections(events);
    const behind = await readModelsBehind(source.readModels!, fresh.keys(), Math.max(...events.map((e) => e.position)));
    for (const f of behind) fresh.delete(f.subject.slice("read_model:".length));
    findings.push(...behind, ...(await compareDocuments(source.readModels!, fresh)));
  }
  const lastRequest = events[events.length - 1]!.metadata.request_id;
  return {
    payment_id: paymentId,
    stream,
    timeline,
    final,
    record: final.status === "none" ? null : paymentRecord(final, lastRequest),
    head_hash: headOf(events),
    read_models: readModelVerdict(compared, findings),
    findings,
    // attempts recorded as events before (payment_deliveries), then the delivery rows kept since (operational state)
    deliveries: [
      ...((await source.readModels?.get<DeliveriesDoc>(paymentDeliveriesProjection.name, paymentId))?.deliveries ?? []),
      ...((await source.readModels?.list<DeliveryRow>("webhook_deliveries", `pay/${paymentId}/`)) ?? []).map(asEntry),
    ],
  };
}

/**
 * Every stream of the store: chains intact, transitions legal, amounts within their invariants,
 * and (with read models) every document equal to a fresh replay. Read models are compared only
 * when every payment stream replays legally (a fold of an illegal stream has no right answer).
 *
 * Memory stays bounded by a page of events and one stream, not by the store: (1) the events are
 * read once in global order, a page at a time, to learn the streams and which stream writes each
 * read-model document; (2) each stream is read and verified on its own, and the documents only it
 * writes are folded and compared then; (3) documents written by several streams (none, for the
 * projections of this repository) are folded in one more paged pass. What is kept across the
 * store is per stream or per document: names, keys, findings.
 */
export async function auditAll(source: AuditSource, { onProgress, anchors = {}, pageSize = PAGE_SIZE, projections = PROJECTIONS }: AuditAllOptions = {}): Promise<StoreAudit> {
  const { store, readModels } = source;
  const last = await lastPosition(store);

  // (1) streams, and the stream that writes each document (null: more than one)
  const streams = new Set<string>();
  const writers = new Map(projections.map((p) => [p.name, new Map<string, string | null>()]));
  let events = 0;
  for await (const page of batchesOf(store, pageSize)) {
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
  if (readModels) {
    readModelFindings.push(...(await readModelsBehind(readModels, projections.map((p) => p.name), last)));
    for (const p of projections) if (!readModelFindings.some((f) => f.subject === `read_model:${p.name}`)) comparable.add(p.name);
  }

  // (2) each stream on its own
  let payments = 0;
  let done = 0;
  for (const stream of streams) {
    // in global order, as the store committed them (a reordered stream shows as such)
    const streamEvents = (await store.readStream(stream)).sort((a, b) => a.position - b.position);
    if (paymentIdOf(stream) === null) findings.push(...checkOtherStream(streamEvents));
    else {
      payments++;
      findings.push(...checkPaymentStream(streamEvents).findings);
    }
    if (stream in anchors) findings.push(...checkAnchors(new Map([[stream, streamEvents]]), { [stream]: anchors[stream]! }));
    if (readModels && comparable.size) {
      const owned = projections.filter((p) => comparable.has(p.name));
      const fresh = foldProjections(streamEvents, owned);
      for (const [name, docs] of fresh) for (const key of docs.keys()) if (writers.get(name)!.get(key) !== stream) docs.delete(key);
      readModelFindings.push(...(await compareDocuments(readModels, fresh)));
    }
    onProgress?.({ phase: "verifying streams", done: ++done, total: streams.size, unit: "streams" });
  }
  findings.push(...checkAnchors(new Map(), Object.fromEntries(Object.entries(anchors).filter(([stream]) => !streams.has(stream)))));

  // (3) documents several streams write, folded in global order
  if (readModels) {
    const shared = new Map([...writers].filter(([name]) => comparable.has(name)).map(([name, byKey]) => [name, new Set([...byKey].filter(([, w]) => w === null).map(([k]) => k))]));
    if ([...shared.values()].some((keys) => keys.size > 0)) {
      const docs = new Map([...shared.keys()].map((name) => [name, new Map<string, unknown>()]));
      for await (const page of batchesOf(store, pageSize)) {
        for (const e of page) {
          for (const p of projections) {
            const key = p.keyOf(e);
            if (key === null || !shared.get(p.name)?.has(key)) continue;
            docs.get(p.name)!.set(key, p.apply(docs.get(p.name)!.get(key), e));
          }
        }
        onProgress?.({ phase: "folding shared documents", done: page[page.length - 1]!.position, total: last, unit: "events" });
      }
      readModelFindings.push(...(await compareDocuments(readModels, docs)));
    }
    // documents no event explains
    for (const name of comparable) {
      const extra = (await readModels.count(name)) - writers.get(name)!.size;
      if (extra > 0) readModelFindings.push({ kind: "read_model_mismatch", subject: `read_model:${name}`, message: `read model ${name} has ${extra} document(s) no event explains` });
    }
  }

  const compared = readModels !== undefined && !findings.some((f) => f.kind === "illegal_transition");
  if (compared) findings.push(...readModelFindings);
  return { streams: streams.size, payments, events, read_models: readModelVerdict(compared, findings), findings };
}

export interface AuditAllOptions {
  onProgress?: OnProgress;
  anchors?: Anchors;
  /** Events per read (the memory bound of the reads). */
  pageSize?: number;
  projections?: readonly Projection<any>[];
}

/**
 * An anchored head must still be in its stream's chain (streams only grow): when it is not, the
 * stream was truncated or rewritten since, which the chain alone cannot show.
 */
function checkAnchors(byStream: ReadonlyMap<string, readonly RecordedEvent[]>, anchors: Anchors): Finding[] {
  const findings: Finding[] = [];
  for (const [stream, hash] of Object.entries(anchors)) {
    if (!(byStream.get(stream) ?? []).some((e) => e.metadata.hash === hash)) {
      findings.push({ kind: "anchor_missing", subject: stream, message: `${stream} no longer holds its anchored head ${hash.slice(0, 12)}…: truncated or rewritten since it was anchored` });
    }
  }
  return findings;
}

/** Every stream's head hash: the values to keep outside the store (`auditAll({ anchors })`). */
export async function streamHeads(store: AuditSource["store"]): Promise<Anchors> {
  const heads: Anchors = {};
  for await (const batch of batchesOf(store)) for (const e of batch) if (typeof e.metadata.hash === "string") heads[e.stream] = e.metadata.hash;
  return heads;
}
