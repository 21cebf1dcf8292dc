// The history of a chaos run: every invocation and completion of every client request, and every
// injected fault, with monotonic timestamps (ms since the run started), one JSON object per line.
// An operation is one logical request (one Idempotency-Key); each send of it is a try. A try's
// outcome is ok (the answer), refused (its status and code), or unknown (no answer: a timeout, a
// lost connection; or a 5xx: a write answered 503 may have committed before the store went away).

export type WriteKind = "create" | "authorize" | "capture" | "cancel" | "refund" | "present_card" | "collect" | "save_card";
export type ReadKind = "read" | "list_payments" | "list_cards" | "list_terminals";
export type OpKind = WriteKind | ReadKind;

export const WRITE_KINDS: ReadonlySet<OpKind> = new Set<WriteKind>(["create", "authorize", "capture", "cancel", "refund", "present_card", "collect", "save_card"]);

/**
 * What the checker keeps of a payment record in an answer (the fields it compares with the
 * machine): only what the answer carried (a create answers no amounts, nor does the client SDK).
 */
export interface RecordView {
  payment_id: string;
  status: string;
  amount_authorized?: string;
  amount_capturable?: string;
  amount_captured?: string;
  amount_refunded?: string;
  payment_method_id?: string | null;
  request_id?: number;
}

export interface Invoke {
  type: "invoke";
  op: number;
  try: number;
  t: number;
  worker: number;
  kind: OpKind;
  /** The Idempotency-Key of a write (the same on every try); null for reads. */
  key: string | null;
  /** The payment the operation is about (null: a create, a list of several). */
  payment_id: string | null;
  /** Which server process it was sent to. */
  server: number;
  path: string;
  body?: unknown;
  /** A resend of an operation already answered ok (its answer is lost on purpose: check d). */
  resend?: boolean;
}

export interface Complete {
  type: "complete";
  op: number;
  try: number;
  t: number;
  outcome: "ok" | "refused" | "unknown";
  /** HTTP status; 0 when no answer came. */
  status: number;
  code?: string;
  /** Request-Id header of the answer. */
  request_id?: number;
  /** Idempotent-Replayed header. */
  replayed?: boolean;
  /** SHA-256 of the answer's body (a resend must get the same bytes). */
  body_sha256?: string;
  /** A payment record answered (writes, the status read). */
  record?: RecordView;
  /** A list of payments answered, and whether it said there were more. */
  records?: RecordView[];
  has_more?: boolean;
  /** Cards on file (save card, a customer's cards) or terminals listed: their ids. */
  ids?: string[];
  /** A refusal's current_status, when the machine refused. */
  current_status?: string;
  error?: string;
}

export type FaultKind = "kill" | "terminate_connections" | "database_restart" | "processor_delay" | "processor_timeout";

export interface Fault {
  type: "fault";
  t: number;
  kind: FaultKind;
  phase: "start" | "end";
  detail?: string;
}

/** The wall clock when t was taken (the first entry): events' timestamps are placed on the run's time with it. */
export interface Clock {
  type: "clock";
  t: number;
  /** Date.now() at t. */
  wall: number;
}

export type Entry = Invoke | Complete | Fault | Clock;

export const toJsonl = (entries: readonly Entry[]) => entries.map((e) => JSON.stringify(e)).join("\n") + (entries.length ? "\n" : "");

export const fromJsonl = (text: string): Entry[] =>
  text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Entry);
