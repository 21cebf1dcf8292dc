// What audits report: findings (each named, never thrown), a payment's timeline, the verdicts.
import type { PaymentState } from "../../machines/fold.js";
import type { DeliveryEntry } from "../../projections/payment-deliveries.js";
import type { PaymentRecord } from "../present/payment-record.js";
import type { ChainFindingKind } from "./chain.js";

export type FindingKind =
  | ChainFindingKind
  /** A stored event whose data or metadata is not JSON (edited in the database): it cannot be read, its stream is checked up to it. */
  | "unreadable"
  /** An event of a stream other than a payment's that this release cannot read (unknown type, later version, data its schema refuses). */
  | "invalid_event"
  | "anchor_missing"
  /** No transition for the event in the payment's status (or not a valid payment event). */
  | "illegal_transition"
  /** Transitions for the event exist in that status, but their guards failed (`guards` names them). */
  | "guard_failed"
  | "amount_invariant"
  /** The processor acted on an abandoned call after the payment had moved on (LateAnswerUnapplied): for an operator to settle. */
  | "late_answer_unapplied"
  | "read_model_mismatch"
  | "read_model_missing"
  | "read_model_behind"
  /** A read model past the store's last event: events it folded are gone (removed, or the store restored from an older backup). */
  | "read_model_ahead";

/** Head hashes of streams recorded earlier, outside the store (`streamHeads`): stream -> hash. */
export type Anchors = Record<string, string>;

/** What became of the anchors an audit was handed, so a heads file that anchors nothing cannot pass for a clean one. */
export interface AnchorsChecked {
  /** Heads looked for: every one handed in (`auditAll`), the payment's streams' (`audit`). */
  checked: number;
  /** Of them, those still in their stream's chain (each other one is an `anchor_missing` finding). */
  held: number;
}

export interface Finding {
  kind: FindingKind;
  /** The stream, or `read_model:NAME` for a read-model finding. */
  subject: string;
  event_id?: string;
  revision?: number;
  /** guard_failed: the guard that failed, for each transition the machine tried. */
  guards?: string[];
  message: string;
}

/** A refused transition: the fold of its stream has no right answer, so read models are not compared. */
export const isRefusal = (f: Finding) => f.kind === "illegal_transition" || f.kind === "guard_failed";
/** Whether the findings say the stream's hash chain does not hold: an event edited, removed, reordered, inserted, renumbered, or one that cannot be read (its content no longer what was hashed). */
export const chainBroken = (findings: readonly Finding[]) => findings.some((f) => ["unreadable", "edited", "removed", "reordered", "inserted", "revision_gap"].includes(f.kind));

export interface TimelineRow {
  revision: number;
  position: number;
  event_id: string;
  type: string;
  timestamp: string;
  request_id: number;
  actor: string | null;
  /** The terminal or reader the payment was on after this event, if any, or the one the event names (an attempt to start one). */
  terminal_id: string | null;
  idempotency_key: string | null;
  /** The version of the machine that decided the event (its metadata); null: before machine versions. */
  machine_version: string | null;
  status_before: string;
  status_after: string;
  /** false: the machine would not have allowed this event (status unchanged). */
  allowed: boolean;
  /** Today's machine would refuse the event; the earlier machine that decided it allowed it. */
  allowed_by_machine: string | null;
  amounts_after: { authorized: string; captured: string; refunded: string };
  /** What the event says besides status and amounts (the reference given, why an attempt was abandoned...): ./event-detail.ts. */
  detail: string | null;
  /** Set on the processor's late answer to an attempt abandoned as never received before its call landed: that attempt's id (its metadata). */
  late_answer_to?: string;
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
  /** Attempts to deliver the payment's public events to webhook endpoints (from the payment_deliveries read model; empty without read models). */
  deliveries: DeliveryEntry[];
  /** Set when anchors were handed in; `given`: how many, the payment's streams' or not. */
  anchors?: AnchorsChecked & { given: number };
}

export interface StoreAudit {
  streams: number;
  payments: number;
  events: number;
  read_models: "equal" | "differ" | "not_compared";
  /** Streams whose read-model documents were not compared: neither today's machine nor the one that decided it allows one of their events, or one cannot be read or is not one this release reads (every other stream's were). */
  read_models_not_compared?: number;
  /** Payment events by the machine version that decided them; `before_machine_versions`: those that carry none. */
  machine_versions: Record<string, number>;
  /** Events today's machine would refuse that the earlier machine which decided them allowed. */
  allowed_by_earlier_machines: { stream: string; revision: number; type: string; machine_version: string }[];
  /** Set when anchors were handed in; `streams_not_in_store`: anchored streams the store does not hold at all. */
  anchors?: AnchorsChecked & { streams_not_in_store: number };
  findings: Finding[];
}
