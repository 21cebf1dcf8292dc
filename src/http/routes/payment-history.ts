// Extensions for people looking at payments (the web console, an auditor, a support desk): the
// account's payments with a status filter, a search and paging; one payment's audit (event
// timeline, hash-chain verdict, read models compared with a fresh replay), its transition
// diagram with its own path highlighted, and its state as of a moment. All read-only, all
// scoped to the API key's account (another account's payment reads as 404).
import { z } from "zod";
import { streams } from "../../../machines/events.js";
import { TransitionRefused } from "../../../machines/fold.js";
import { PAYMENT_STATUSES } from "../../../machines/payment.js";
import { listPayments, positionOfPayment, type ListCursors, type ListPosition } from "../../../projections/payment-list.js";
import { asOf } from "../../audit/as-of.js";
import { audit } from "../../audit/audit.js";
import { chainBroken } from "../../audit/findings.js";
import { diagram } from "../../audit/diagram.js";
import type { Engine } from "../../engine.js";
import { NotFound } from "../../errors.js";
import { UnreadableEvent } from "../../store/port.js";
import { Count, Cursor, Id } from "../../inputs.js";
import { presentedJson, presentPayment } from "../../present/api-versions.js";
import { defineRoute } from "../route.js";
import { preSerialized } from "../serializer.js";
import { PaymentRecordOut } from "../schemas.js";

export const ListPaymentsInput = z
  .strictObject({
    external_account_id: Id,
    /** One of status, capture_method, terminal_id and external_customer_id at a time (each has its index). */
    // spec §3: `success` and `succeeded` are one status (/v1 writes the first)
    status: z
      .enum([...PAYMENT_STATUSES, "success"])
      .transform((v) => (v === "success" ? "succeeded" : v))
      .optional(),
    capture_method: z.enum(["automatic", "manual"]).optional(),
    terminal_id: Id.optional(),
    external_customer_id: Id.optional(),
    /** The start of a payment id or of an external transaction (payment) id (from 3 characters on; a shorter q is matched whole). */
    q: Id.optional(),
    limit: Count(1, 100).default(20),
    /** Paging: the last payment id of the page before. */
    starting_after: Id.optional(),
    /** Paging: `next_cursor` of the page before. */
    cursor: Cursor(512, "the next_cursor of the page before", 1).optional(),
  })
  .refine((input) => input.starting_after === undefined || input.cursor === undefined, { message: "give starting_after or cursor, not both", path: ["cursor"] });
const PaymentRef = { external_account_id: Id, payment_id: Id };
export const PaymentAuditInput = z.strictObject(PaymentRef);
export const PaymentDiagramInput = z.strictObject({ ...PaymentRef, format: z.enum(["svg", "mermaid", "dot"]).default("svg"), layout: z.enum(["full", "compact"]).default("full") });
export const PaymentAsOfInput = z.strictObject({ ...PaymentRef, timestamp: z.string().min(1) });

const PaymentOut = PaymentRecordOut("v2");
export const PaymentListOut = z.strictObject({
  data: z.array(PaymentOut),
  has_more: z.boolean(),
  /** The next page's `cursor` (null on the last page). */
  next_cursor: z.string().nullable(),
});
const FindingOut = z.strictObject({ kind: z.string(), subject: z.string(), event_id: z.string().optional(), revision: z.number().int().optional(), guards: z.array(z.string()).optional(), message: z.string() });
const TimelineRowOut = z.strictObject({
  revision: z.number().int(),
  position: z.number().int(),
  event_id: z.string(),
  type: z.string(),
  timestamp: z.string(),
  request_id: z.number().int(),
  actor: z.string().nullable(),
  terminal_id: z.string().nullable(),
  idempotency_key: z.string().nullable(),
  /** The machine version that decided the event (docs/machines/<hash>.json); null: appended before machine versions were recorded. */
  machine_version: z.string().nullable(),
  status_before: z.string(),
  status_after: z.string(),
  allowed: z.boolean(),
  /** Set when today's machine would refuse the event and the earlier machine that decided it allowed it. */
  allowed_by_machine: z.string().nullable(),
  amounts_after: z.strictObject({ authorized: z.string(), captured: z.string(), refunded: z.string() }),
  /** What the event says besides status and amounts: the reference given, an attempt's amount, why it was abandoned, why the payment failed, the refund's or saved card's id. */
  detail: z.string().nullable(),
  /** Set on the processor's late answer to an attempt abandoned as never received before its call landed: that attempt's id. */
  late_answer_to: z.string().optional(),
});
export const PaymentAuditOut = z
  .strictObject({
    payment_id: z.string(),
    /** intact: every event's hash and link to the one before verify (README: the hash chain). */
    chain: z.enum(["intact", "broken"]),
    head_hash: z.string().nullable(),
    read_models: z.enum(["equal", "differ", "not_compared"]),
    findings: z.array(FindingOut),
    /** The commands the machine allows the payment now (capture, cancel, refund...). */
    allowed_next_steps: z.array(z.string()),
    timeline: z.array(TimelineRowOut),
    record: PaymentOut.nullable(),
  })
  .meta({ title: "PaymentAudit" });
export const PaymentDiagramOut = z.strictObject({ format: z.enum(["svg", "mermaid", "dot"]), diagram: z.string() });
export const PaymentAsOfOut = z.strictObject({
  timestamp: z.string(),
  /** null: the payment did not exist yet at that moment. */
  record: PaymentOut.nullable(),
  revision: z.number().int().nullable(),
  event_id: z.string().nullable(),
});

/** `cursors`: the payment list's, under a key every process of the deployment shares. */
export function paymentHistoryRoutes(engine: Engine, cursors: ListCursors) {
  /** The payment's events, after checking it is the account's (404 otherwise). */
  async function eventsOf(external_account_id: string, payment_id: string) {
    await engine.getPayment({ external_account_id, payment_id });
    return engine.store.readStream(streams.payment(payment_id));
  }
  return [
    defineRoute({
      method: "GET",
      path: "/payments",
      versions: ["v2"],
      summary: "List the account's payments, newest first",
      description:
        "Filter by one of `status`, `capture_method`, `terminal_id` or `external_customer_id`; `q` searches: the payments whose `payment_id` or `external_transaction_id` starts with q (case-sensitive; a q shorter than 3 characters must match the whole id or reference), ordered by the text it matched, then `payment_id` (an exact match comes first); the filters then apply to what it finds, and a page with a filter may hold fewer than `limit`, none even (follow `next_cursor` while `has_more`: an empty page has no last `payment_id` for `starting_after`). Paging: `limit` (1–100, default 20) and either `cursor` (the `next_cursor` of the page before: opaque, sealed and bound to the account) or `starting_after` (the last `payment_id` of the page before); `has_more` says whether another page follows. Pages stay right while payments arrive. The list reflects every write acknowledged before the request; when the read models are behind by more than a few seconds, 503 `read_model_behind` with Retry-After.",
      extension: true,
      auth: "api_key",
      input: ListPaymentsInput,
      response: () => PaymentListOut,
      async run({ limit, starting_after, cursor, ...filters }) {
        // every payment written before the request (bounded wait: ReadModelBehind)
        const reads = engine.projections.fresh;
        let after: ListPosition | undefined;
        if (cursor !== undefined) after = cursors.decode(filters.external_account_id, cursor);
        else if (starting_after !== undefined) {
          after = await positionOfPayment(reads, filters.external_account_id, starting_after, filters.q);
          if (!after) throw new NotFound("payment", starting_after, "starting_after");
        }
        const page = await listPayments(reads, filters, { limit, after });
        return { docs: page.docs, has_more: page.has_more, next_cursor: page.next && cursors.encode(filters.external_account_id, page.next) };
      },
      // each payment written out once per stored document (presentedJson), the page around them here, in the schema's order
      present: ({ docs, has_more, next_cursor }) => preSerialized(`{"data":[${docs.map(presentedJson).join(",")}],"has_more":${has_more},"next_cursor":${JSON.stringify(next_cursor)}}`),
    }),
    defineRoute({
      method: "GET",
      path: "/payment/intent/:payment_id/audit",
      versions: ["v2"],
      summary: "A payment's audit: its event timeline, hash-chain verdict and findings",
      description:
        "The timeline has one row per event (type, time, request id, actor, status before and after, amounts). `chain` is `broken` when an event was edited (or can no longer be read), removed, reordered or inserted; `findings` name each problem. A history the machine cannot fold is reported so, with no step allowed. The same as `cardflow audit <payment_id>`.",
      extension: true,
      auth: "api_key",
      input: PaymentAuditInput,
      response: () => PaymentAuditOut,
      async run({ external_account_id, payment_id }) {
        // a history the machine cannot fold (an event edited, removed, reordered or unreadable) is
        // what the audit is for: it is reported, no step is allowed on it, and the owner is the one
        // its first event names (none readable: not found, as for another account's payment)
        const refused = (error: unknown) => (error instanceof TransitionRefused || error instanceof UnreadableEvent ? null : Promise.reject(error));
        const allowed_next_steps = await engine.allowedNextSteps(external_account_id, payment_id).catch(refused);
        // the read models compared must reflect every event of the payment (and all before them)
        await engine.projections.caughtUp();
        const report = await audit({ store: engine.store, readModels: engine.readModels }, payment_id);
        if (allowed_next_steps === null && report.final.context.intent?.external_account_id !== external_account_id) throw new NotFound("payment", payment_id, "payment_id");
        return { ...report, allowed_next_steps: allowed_next_steps ?? [] };
      },
      present: ({ payment_id, head_hash, read_models, findings, allowed_next_steps, timeline, record }) => ({
        payment_id,
        chain: chainBroken(findings) ? ("broken" as const) : ("intact" as const),
        head_hash,
        read_models,
        findings,
        allowed_next_steps,
        timeline,
        record: record && presentPayment(record, "v2"),
      }),
    }),
    defineRoute({
      method: "GET",
      path: "/payment/intent/:payment_id/diagram",
      versions: ["v2"],
      summary: "The payment machine's transition diagram with this payment's path highlighted",
      description: "`format`: `svg` (default, rendered by Graphviz), `mermaid` or `dot`; `layout`: `full` (default: every transition with its guards, left to right) or `compact` (top to bottom, one arrow per pair of states, guards as tooltips: for screens); the steps the payment took are numbered. The same as `cardflow diagram --payment <payment_id>`.",
      extension: true,
      auth: "api_key",
      input: PaymentDiagramInput,
      response: () => PaymentDiagramOut,
      async run({ external_account_id, payment_id, format, layout }) {
        return { format, diagram: await diagram({ format, layout, path: await eventsOf(external_account_id, payment_id) }) };
      },
      present: (answer) => answer,
    }),
    defineRoute({
      method: "GET",
      path: "/payment/intent/:payment_id/as-of",
      versions: ["v2"],
      summary: "The payment as it stood at a moment",
      description: "`timestamp`: ISO 8601 with its offset (Z or ±hh:mm), e.g. 2026-01-01T00:05:00Z. The record folded from the events recorded at or before it; `record` is null when the payment did not exist yet. The same as `cardflow as-of`.",
      extension: true,
      auth: "api_key",
      input: PaymentAsOfInput,
      response: () => PaymentAsOfOut,
      async run({ external_account_id, payment_id, timestamp }) {
        await engine.getPayment({ external_account_id, payment_id });
        return { timestamp, at: await asOf(engine.store, payment_id, timestamp) };
      },
      present: ({ timestamp, at }) => ({ timestamp, record: at && presentPayment(at.record, "v2"), revision: at?.revision ?? null, event_id: at?.event_id ?? null }),
    }),
  ];
}
