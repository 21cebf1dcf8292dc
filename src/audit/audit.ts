// Audits: explain and verify what happened to payments. `audit` gives one payment's timeline
// (time, request, actor, status before -> after, amounts after) with its hash chain verified, its
// transitions checked against the machine, and its stored read models compared with a fresh fold;
// `auditAll` does the same for every stream of a store. Findings are named, never thrown.
import { streams as streamNames } from "../../machines/events.js";
import type { PaymentState } from "../../machines/fold.js";
import { paymentRecord, type PaymentRecord } from "../../projections/payment-record.js";
import type { Projection } from "../../projections/projection.js";
import { deliveriesKey, timelineProjection, type DeliveriesDoc, type DeliveryEntry } from "../../projections/timeline.js";
import { PROJECTIONS } from "../engine.js";
import { NotFound } from "../errors.js";
import { Decimal } from "../money.js";
import { replay } from "../replay.js";
import type { ReadModelStore, RecordedEvent } from "../store/port.js";
import { headOf, sameJson, verifyChain, type ChainFindingKind } from "./chain.js";
import { batchesOf, paymentIdOf, type AuditSource, type OnProgress } from "./source.js";

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
  /** Attempts to deliver the payment's public events to webhook endpoints (from the timeline read model; empty without read models). */
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

/**
 * Compares stored read-model documents with fresh ones. A read model whose checkpoint is behind
 * `lastPosition` is reported as such (catch it up first: the projection runner's catchUp).
 */
async function compareReadModels(readModels: ReadModelStore, fresh: Map<string, Map<string, unknown>>, lastPosition: number, everyDoc: boolean): Promise<Finding[]> {
  const findings: Finding[] = [];
  for (const [name, docs] of fresh) {
    const subject = `read_model:${name}`;
    const checkpoint = await readModels.checkpoint(name);
    if (checkpoint < lastPosition) {
      findings.push({ kind: "read_model_behind", subject, message: `read model ${name} is at position ${checkpoint}, the events reach ${lastPosition}` });
      continue;
    }
    for (const [key, doc] of docs) {
      const stored = await readModels.get(name, key);
      if (stored === undefined) findings.push({ kind: "read_model_missing", subject, message: `read model ${name} has no document ${key}` });
      else if (!sameJson(stored, doc)) findings.push({ kind: "read_model_mismatch", subject, message: `read model ${name}: document ${key} differs from a fresh replay of its events` });
    }
    if (everyDoc) {
      const extra = (await readModels.list(name, "")).length - docs.size;
      if (extra > 0) findings.push({ kind: "read_model_mismatch", subject, message: `read model ${name} has ${extra} document(s) no event explains` });
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
    const lastPosition = Math.max(...events.map((e) => e.position));
    findings.push(...(await compareReadModels(source.readModels!, foldProjections(events), lastPosition, false)));
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
    deliveries: (await source.readModels?.get<DeliveriesDoc>(timelineProjection.name, deliveriesKey(paymentId)))?.deliveries ?? [],
  };
}

/**
 * Every stream of the store: chains intact, transitions legal, amounts within their invariants,
 * and (with read models) every document equal to a fresh replay. Read models are compared only
 * when every payment stream replays legally (a fold of an illegal stream has no right answer).
 */
export async function auditAll(source: AuditSource, { onProgress, anchors = {} }: { onProgress?: OnProgress; anchors?: Anchors } = {}): Promise<StoreAudit> {
  const byStream = new Map<string, RecordedEvent[]>();
  const all: RecordedEvent[] = [];
  for await (const batch of batchesOf(source.store)) {
    for (const e of batch) {
      all.push(e);
      const list = byStream.get(e.stream);
      if (list) list.push(e);
      else byStream.set(e.stream, [e]);
    }
    onProgress?.({ events: all.length, streams: byStream.size });
  }
  const findings: Finding[] = [];
  let payments = 0;
  for (const [stream, events] of byStream) {
    if (paymentIdOf(stream) === null) findings.push(...checkOtherStream(events));
    else {
      payments++;
      findings.push(...checkPaymentStream(events).findings);
    }
  }
  findings.push(...checkAnchors(byStream, anchors));
  const compared = source.readModels !== undefined && !findings.some((f) => f.kind === "illegal_transition");
  if (compared) {
    const lastPosition = all.length ? all[all.length - 1]!.position : 0;
    findings.push(...(await compareReadModels(source.readModels!, foldProjections(all), lastPosition, true)));
  }
  return { streams: byStream.size, payments, events: all.length, read_models: readModelVerdict(compared, findings), findings };
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
