import { beforeAll, describe, expect, it } from "vitest";
import type { PaymentDoc } from "../../projections/payments.js";
import { audit, auditAll, streamHeads, type Finding } from "../../src/audit/audit.js";
import { chainEvents, eventHash } from "../../src/events/chain.js";
import { replayPayment, replayStore } from "../../src/audit/replay.js";
import { formatReplaySummary } from "../../src/audit/format.js";
import { eventsStore } from "../../src/audit/source.js";
import type { RecordedEvent } from "../../src/store/port.js";
import { runFlows, type Flows } from "./flows.js";
import { paymentsProjection } from "../../projections/payments.js";
import * as library from "../../src/index.js";

let flows: Flows;
let stored: RecordedEvent[];
const source = () => ({ store: flows.engine.store, readModels: flows.engine.readModels });

beforeAll(async () => {
  flows = await runFlows();
  stored = await flows.engine.store.readAll();
});

describe("streams the engine produced", () => {
  it("every flow audits clean: chain intact, legal transitions, read models equal", async () => {
    for (const [flow, paymentId] of Object.entries(flows.payments)) {
      const report = await audit(source(), paymentId);
      expect(report.findings, flow).toEqual([]);
      expect(report.read_models, flow).toBe("equal");
      expect(report.record).toEqual(await flows.engine.getPayment({ external_account_id: report.record!.external_account_id, payment_id: paymentId }));
      // the timeline is a chain of statuses from `none` to the final one
      expect(report.timeline[0]!.status_before).toBe("none");
      report.timeline.slice(1).forEach((row, i) => expect(row.status_before).toBe(report.timeline[i]!.status_after));
      expect(report.timeline.at(-1)!.status_after).toBe(report.final.status);
      expect(report.head_hash).toBe(report.timeline.length ? stored.filter((e) => e.stream === report.stream).at(-1)!.metadata.hash : null);
    }
  });

  it("every event carries a hash of its content linked to the previous event of its stream", () => {
    const last = new Map<string, string>();
    for (const e of stored) {
      expect(e.metadata.prev_hash ?? null).toBe(last.get(e.stream) ?? null);
      expect(e.metadata.hash).toBe(eventHash(e.stream, e));
      last.set(e.stream, e.metadata.hash as string);
    }
  });

  it("the timeline names time, request, actor, status before and after, and amounts after", async () => {
    const { timeline } = await audit(source(), flows.payments.terminal_manual!);
    expect(timeline.map((r) => [r.type, r.status_before, r.status_after, r.actor, r.amounts_after])).toEqual([
      ["PaymentIntentCreated", "none", "requires_payment_method", "key_1", { authorized: "0.00", captured: "0.00", refunded: "0.00" }],
      ["TerminalAuthorizationAttempted", "requires_payment_method", "requires_payment_method", "key_1", { authorized: "0.00", captured: "0.00", refunded: "0.00" }],
      ["TerminalAuthorizationStarted", "requires_payment_method", "payment_method_requested", "key_1", { authorized: "0.00", captured: "0.00", refunded: "0.00" }],
      ["PaymentAuthorized", "payment_method_requested", "requires_capture", "processor:A", { authorized: "25.00", captured: "0.00", refunded: "0.00" }],
      ["CaptureAttempted", "requires_capture", "requires_capture", "key_1", { authorized: "25.00", captured: "0.00", refunded: "0.00" }],
      ["PaymentCaptured", "requires_capture", "succeeded", "key_1", { authorized: "25.00", captured: "20.00", refunded: "0.00" }],
      ["RefundAttempted", "succeeded", "succeeded", "key_2", { authorized: "25.00", captured: "20.00", refunded: "0.00" }],
      ["PaymentRefunded", "succeeded", "succeeded", "key_2", { authorized: "25.00", captured: "20.00", refunded: "5.00" }],
      ["RefundAttempted", "succeeded", "succeeded", "key_2", { authorized: "25.00", captured: "20.00", refunded: "5.00" }],
      ["PaymentRefunded", "succeeded", "succeeded", "key_2", { authorized: "25.00", captured: "20.00", refunded: "20.00" }],
    ]);
    // the terminal from the attempt on, the attempt naming it before the terminal has the payment
    const terminal = timeline[2]!.terminal_id;
    expect(terminal).toMatch(/^\w+/);
    expect(timeline.map((r) => r.terminal_id)).toEqual([null, ...timeline.slice(1).map(() => terminal)]);
    for (const row of timeline) {
      expect(row.timestamp).toMatch(/^2026-01-01T00:0\d:\d\d\.000\+00:00$/);
      expect(Number.isInteger(row.request_id)).toBe(true);
    }
  });

  it("a capture the processor settles later counts as captured from its request on, as the payment record shows it", async () => {
    const { timeline, final } = await audit(source(), flows.payments.capture_requested!);
    const requested = timeline.findIndex((r) => r.type === "CaptureRequested");
    expect(timeline[requested]).toMatchObject({ status_after: "capture_requested", amounts_after: { authorized: "25.00", captured: "25.00", refunded: "0.00" } });
    expect(timeline.slice(requested).map((r) => r.amounts_after.captured)).toEqual(timeline.slice(requested).map(() => "25.00"));
    expect(final.status).toBe(timeline.at(-1)!.status_after);
  });

  it("each row's detail says what its event records besides status and amounts", async () => {
    const details = async (flow: string) => (await audit(source(), flows.payments[flow]!)).timeline.map((r) => [r.type, r.detail]);
    const terminal = await details("terminal_manual");
    expect(terminal[1]).toEqual(["TerminalAuthorizationAttempted", expect.stringMatching(/^attempt att_\w+ on tmr_\w+$/)]);
    expect(terminal.filter(([type]) => type === "CaptureAttempted" || type === "RefundAttempted").map(([, d]) => d!.replace(/att_\w+/, "att"))).toEqual([
      "attempt att for 20.00",
      "attempt att for 5.00",
      "attempt att for 15.00",
    ]);
    expect(terminal.filter(([type]) => type === "PaymentRefunded").map(([, d]) => d)).toEqual([expect.stringMatching(/^refund re_\w+$/), expect.stringMatching(/^refund re_\w+$/)]);
    expect(terminal.find(([type]) => type === "PaymentCaptured")![1]).toBeNull();
    expect((await details("stored_card_declined")).find(([type]) => type === "AuthorizationFailed")![1]).toBe("Your card was declined");
    expect((await details("retry_then_cancel")).find(([type]) => type === "PaymentCanceled")![1]).toBe("reason requested_by_customer");
    expect((await details("card_form_automatic")).find(([type]) => type === "CardSaved")![1]).toMatch(/^saved as pm_\w+ for customer cus_2$/);
  });

  it("a refused attempt's row says why it was abandoned, and the reference given back", async () => {
    const { eventDetail } = await import("../../src/audit/event-detail.js");
    expect(eventDetail({ type: "AttemptAbandoned", data: { attempt_id: "att_1", reason: "processor refused: terminal_busy" } })).toBe("attempt att_1 abandoned: processor refused: terminal_busy");
    expect(eventDetail({ type: "TransactionReferenceGiven", data: { external_transaction_id: null } })).toBe("reference given back: none");
    expect(eventDetail({ type: "TransactionReferenceGiven", data: { external_transaction_id: 42 } })).toBe("reference 42");
    expect(eventDetail({ type: "AuthorizationFailed", data: { last_error: "Offline declined", last_error_code: "OFFLINE_DECLINED" } })).toBe("Offline declined (OFFLINE_DECLINED)");
  });

  it("auditAll and replayStore find nothing wrong with the whole store", async () => {
    const all = await auditAll(source());
    expect(all.findings).toEqual([]);
    expect(all).toMatchObject({ events: stored.length, payments: Object.keys(flows.payments).length, read_models: "equal" });
    const summary = await replayStore(flows.engine.store);
    expect(summary.illegal).toEqual([]);
    expect(summary.payments).toBe(Object.keys(flows.payments).length);
    expect(Object.values(summary.by_status).reduce((a, b) => a + b, 0)).toBe(summary.payments);
    for (const [flow, id] of Object.entries(flows.payments)) {
      const { final } = await audit(source(), id);
      expect(summary.by_status[final.status], flow).toBeGreaterThan(0);
    }
  });
});

describe("tampering is detected and named", () => {
  const paymentOf = () => flows.payments.terminal_manual!;
  const streamOf = () => `payment-${paymentOf()}`;
  /** The store as a copy whose payment stream `edit` rewrote (revisions and positions kept in place). */
  async function tampered(edit: (events: RecordedEvent[]) => RecordedEvent[]) {
    const others = stored.filter((e) => e.stream !== streamOf());
    const mine = structuredClone(stored.filter((e) => e.stream === streamOf()));
    const slots = mine.map((e) => ({ revision: e.revision, position: e.position }));
    const edited = edit(mine).map((e, i) => ({ ...e, ...(slots[i] ?? { revision: i, position: slots.at(-1)!.position + i }) }));
    const store = eventsStore([...others, ...edited]);
    return { one: (await audit({ store }, paymentOf())).findings, all: (await auditAll({ store })).findings, edited, store };
  }
  const kinds = (findings: Finding[]) => findings.map((f) => f.kind);
  const chainOnly = (findings: Finding[]) => findings.filter((f) => ["edited", "removed", "reordered", "inserted", "revision_gap"].includes(f.kind));

  it("an edited event: its content no longer matches its hash", async () => {
    const { one, all, edited } = await tampered((events) => {
      (events[7]!.data as { amount: string }).amount = "1.00";
      return events;
    });
    expect(one).toEqual([expect.objectContaining({ kind: "edited", event_id: edited[7]!.id, revision: 7 })]);
    expect(one[0]!.message).toContain("PaymentRefunded");
    expect(kinds(all)).toEqual(["edited"]);
  });

  it("edited metadata (who did it) is an edit too", async () => {
    const { one } = await tampered((events) => {
      events[3]!.metadata.actor = "key_someone_else";
      return events;
    });
    expect(one).toEqual([expect.objectContaining({ kind: "edited", revision: 3 })]);
  });

  it("a removed event: the next one's link names a missing predecessor", async () => {
    const { one, edited } = await tampered((events) => events.filter((_, i) => i !== 3));
    expect(kinds(one)).toContain("removed");
    // named by the event after the gap: the capture attempt whose predecessor (the authorization) is gone
    expect(one.find((f) => f.kind === "removed")).toMatchObject({ event_id: edited[3]!.id, revision: 3 });
    expect(edited[3]!.type).toBe("CaptureAttempted");
    // the machine also refuses a capture that was never authorized
    expect(kinds(one)).toContain("illegal_transition");
  });

  it("a removed first event", async () => {
    const { one, edited } = await tampered((events) => events.slice(1));
    expect(one).toContainEqual(expect.objectContaining({ kind: "removed", event_id: edited[0]!.id }));
  });

  it("reordered events, even when the machine accepts the new order", async () => {
    // the two refunds (attempt and outcome each) in the other order
    // (an attempt and its outcome are adjacent: no single swap is one the machine accepts)
    const { one, edited } = await tampered((events) => [...events.slice(0, 6), events[8]!, events[9]!, events[6]!, events[7]!]);
    expect(one.length).toBeGreaterThan(0);
    expect(new Set(kinds(one))).toEqual(new Set(["reordered"]));
    for (const finding of one) expect(edited.slice(6).map((e) => e.id)).toContain(finding.event_id);
  });

  it("audit and auditAll read a stream alike: revisions swapped with positions left, or positions swapped with revisions left, are reordered in both", async () => {
    // a probe: with the two refunds' revisions swapped, auditAll (reading in position order) found
    // revision gaps and read models equal, where audit found the stream reordered and read models differing
    const swap = (field: "revision" | "position") => (events: RecordedEvent[]) => {
      const slots = events.map((e) => ({ revision: e.revision, position: e.position }));
      const moved = [...events.slice(0, 6), events[8]!, events[9]!, events[6]!, events[7]!];
      return events.map((e, i) => ({ ...e, [field]: slots[moved.indexOf(e)]![field] }));
    };
    for (const field of ["revision", "position"] as const) {
      const others = stored.filter((e) => e.stream !== streamOf());
      const store = eventsStore([...others, ...swap(field)(structuredClone(stored.filter((e) => e.stream === streamOf())))]);
      const one = (await audit({ store }, paymentOf())).findings;
      const all = (await auditAll({ store })).findings;
      expect(new Set(kinds(one)), field).toEqual(new Set(["reordered"]));
      expect(all, field).toEqual(one);
    }
  });

  it("replayStore folds each stream by revision, as replayPayment does: the last two events' revisions swapped (positions left) are refused in both, and reported stored out of order", async () => {
    // a probe: store-wide replay folded in position order ("illegal transitions: none") where
    // `replay --payment` folded by revision (REFUSED)
    const mine = structuredClone(stored.filter((e) => e.stream === streamOf()));
    const [a, b] = [mine.at(-2)!, mine.at(-1)!];
    [a.revision, b.revision] = [b.revision, a.revision];
    const store = eventsStore([...stored.filter((e) => e.stream !== streamOf()), ...mine]);
    const one = await replayPayment(store, paymentOf());
    // the refund's outcome before its attempt: refused, and the attempt after it stays in flight
    expect(one.illegal.map((s) => [s.revision, s.type])).toEqual([[b.revision, "PaymentRefunded"]]);
    const summary = await replayStore(store);
    expect(summary.illegal.map((i) => [i.payment_id, i.revision, i.type, i.refused])).toEqual(one.illegal.map((s) => [paymentOf(), s.revision, s.type, s.refusal!.message]));
    expect(summary.reordered).toEqual([{ payment_id: paymentOf(), revision: a.revision, position: a.position, event_id: a.id, type: a.type }]);
    expect(summary.by_status).toEqual((await replayStore(flows.engine.store)).by_status);
    expect(formatReplaySummary(summary)).toContain(`stored out of revision order (folded by revision): 1\n  RefundAttempted at ${streamOf()}@${a.revision} is stored at position ${a.position}, before an earlier revision of its stream\n`);
    // a clean store has none
    expect((await replayStore(flows.engine.store)).reordered).toEqual([]);
  });

  it("an inserted event with a forged, valid-looking link", async () => {
    const { one, edited } = await tampered((events) => {
      const [forged] = chainEvents(streamOf(), events[7]!.metadata.hash as string, [
        { ...events[7]!, id: "00000000-0000-4000-8000-0000deadbeef", data: { refund_id: "re_forged", amount: "1.00", reason: null } },
      ]);
      return [...events.slice(0, 8), { ...events[7]!, ...forged! }, ...events.slice(8)];
    });
    expect(chainOnly(one)).toEqual([expect.objectContaining({ kind: "inserted", event_id: "00000000-0000-4000-8000-0000deadbeef", revision: 8 })]);
    // the forged refund also leaves the last genuine refund above what was captured: the findings name the guards
    expect(one.filter((f) => f.kind === "guard_failed").map((f) => [f.revision, f.guards, f.message.replace(/pi_\w+/, "pi_x")])).toEqual([
      [9, ["withinRefundable"], "RefundAttempted (payment-pi_x@9) is refused: guard withinRefundable failed in succeeded"],
      [10, ["answersAttempt"], "PaymentRefunded (payment-pi_x@10) is refused: guard answersAttempt failed in succeeded"],
    ]);
    expect(kinds(one)).not.toContain("illegal_transition");
    expect(edited).toHaveLength(11);
  });

  it("an inserted event without any hash", async () => {
    const { one } = await tampered((events) => {
      const { hash: _h, prev_hash: _p, ...metadata } = events[4]!.metadata;
      return [...events.slice(0, 5), { ...events[4]!, id: "00000000-0000-4000-8000-00000000feed", metadata }, ...events.slice(5)];
    });
    expect(one).toContainEqual(expect.objectContaining({ kind: "inserted", event_id: "00000000-0000-4000-8000-00000000feed" }));
  });

  it("an edited event re-hashed by someone who knows the algorithm breaks the next link", async () => {
    const { one, edited } = await tampered((events) => {
      (events[4]!.data as { amount: string }).amount = "1.00";
      events[4]!.metadata.hash = eventHash(streamOf(), events[4]!);
      return events;
    });
    expect(one).toEqual([expect.objectContaining({ kind: "removed", event_id: edited[5]!.id })]);
    expect(one[0]!.message).toContain("edited and re-hashed");
  });

  it("an edit that breaks the event's schema is reported, not thrown on", async () => {
    const { one, all } = await tampered((events) => {
      (events[5]!.data as { amount: string }).amount = "twenty";
      return events;
    });
    // the capture is refused, and so is everything after it (the capture attempt stays in flight)
    expect(kinds(one)).toEqual(["edited", ...Array(5).fill("illegal_transition")]);
    expect(one[1]!.message).toMatch(/PaymentCaptured .* is refused: not a valid payment event: data\.amount/);
    expect(kinds(all)).toContain("edited");
    const summary = await replayStore(eventsStore(stored.map((e) => (e.id === one[0]!.event_id ? { ...e, data: { amount: "twenty", authorization: null } } : e))));
    expect(summary.illegal[0]).toMatchObject({ type: "PaymentCaptured", refused: expect.stringMatching(/^not a valid payment event/) });
  });

  it("truncation and a whole rewritten chain pass the chain alone, but not anchored heads", async () => {
    const anchors = await streamHeads(flows.engine.store);
    expect(Object.keys(anchors)).toHaveLength(new Set(stored.map((e) => e.stream)).size);
    const truncated = await tampered((events) => events.slice(0, -1));
    expect(truncated.all).toEqual([]);
    const rewritten = await tampered((events) => {
      (events[4]!.data as { amount: string }).amount = "1.00";
      const unchained = events.map(({ metadata: { hash: _h, prev_hash: _p, ...metadata }, ...e }) => ({ ...e, metadata }));
      return chainEvents(streamOf(), null, unchained).map((e, i) => ({ ...events[i]!, ...e }));
    });
    expect(rewritten.all).toEqual([]);
    const heads = Object.keys(anchors).length;
    for (const store of [truncated.store, rewritten.store]) {
      const report = await auditAll({ store }, { anchors });
      expect(report.findings).toEqual([expect.objectContaining({ kind: "anchor_missing", subject: streamOf() })]);
      expect(report.anchors).toEqual({ checked: heads, held: heads - 1, streams_not_in_store: 0 });
    }
    // streams that only grew since keep their anchored head in their chain
    const older = { ...anchors, [streamOf()]: stored.filter((e) => e.stream === streamOf())[2]!.metadata.hash as string };
    expect(await auditAll({ store: flows.engine.store }, { anchors: older })).toMatchObject({ findings: [], anchors: { checked: heads, held: heads } });
    // the count is there whenever anchors are handed in, none among them too; not without
    expect((await auditAll({ store: flows.engine.store }, { anchors: {} })).anchors).toEqual({ checked: 0, held: 0, streams_not_in_store: 0 });
    expect(await auditAll({ store: flows.engine.store })).not.toHaveProperty("anchors");
  });

  it("a read model that no longer matches its events", async () => {
    const id = paymentOf();
    const doc = await flows.engine.readModels.get<PaymentDoc>(paymentsProjection.name, id);
    const checkpoint = await flows.engine.readModels.checkpoint(paymentsProjection.name);
    const tampered: PaymentDoc = { ...doc!, state: { ...doc!.state, context: { ...doc!.state.context, amount_refunded: "0.00" } } };
    expect(doc!.state.context.amount_refunded).not.toBe("0.00");
    await flows.engine.readModels.commitBatch([{ projection: paymentsProjection.name, docs: [{ key: id, doc: tampered }], checkpoint }]);
    try {
      expect((await audit(source(), id)).findings).toEqual([expect.objectContaining({ kind: "read_model_mismatch", subject: `read_model:${paymentsProjection.name}` })]);
      expect(kinds((await auditAll(source())).findings)).toEqual(["read_model_mismatch"]);
    } finally {
      await flows.engine.readModels.commitBatch([{ projection: paymentsProjection.name, docs: [{ key: id, doc }], checkpoint }]);
    }
  });
  it("a stream the machine refuses leaves its own documents uncompared, not every stream's: another payment's edited read model is still found", async () => {
    // this payment's refund edited in place (above what was captured): its stream no longer folds
    const { store, all } = await tampered((events) => {
      const refund = events.find((e) => e.type === "RefundAttempted")!;
      (refund.data as { amount: string }).amount = "999.00";
      return events;
    });
    expect(kinds(all)).toEqual(expect.arrayContaining(["edited", "guard_failed"]));
    const other = flows.payments.stored_card_refund ?? Object.values(flows.payments).find((id) => id !== paymentOf())!;
    const doc = await flows.engine.readModels.get<PaymentDoc>(paymentsProjection.name, other);
    const checkpoint = await flows.engine.readModels.checkpoint(paymentsProjection.name);
    await flows.engine.readModels.commitBatch([{ projection: paymentsProjection.name, docs: [{ key: other, doc: { ...doc!, state: { ...doc!.state, status: "canceled" } } }], checkpoint }]);
    try {
      const report = await auditAll({ store, readModels: flows.engine.readModels });
      expect(report.findings).toContainEqual(expect.objectContaining({ kind: "read_model_mismatch", subject: `read_model:${paymentsProjection.name}`, message: expect.stringContaining(other) }));
      expect(report).toMatchObject({ read_models: "differ", read_models_not_compared: 1 });
      // without the edited read model: not "equal", since one stream's documents were not compared
      await flows.engine.readModels.commitBatch([{ projection: paymentsProjection.name, docs: [{ key: other, doc }], checkpoint }]);
      expect(await auditAll({ store, readModels: flows.engine.readModels })).toMatchObject({ read_models: "not_compared", read_models_not_compared: 1 });
    } finally {
      await flows.engine.readModels.commitBatch([{ projection: paymentsProjection.name, docs: [{ key: other, doc }], checkpoint }]);
    }
  });
});

describe("every tampering at every place of every flow's stream is detected and named", () => {
  const ops = ["edited", "removed", "reordered", "inserted"] as const;
  it.each(ops)("%s", async (op) => {
    let cases = 0;
    for (const [flow, paymentId] of Object.entries(flows.payments)) {
      const stream = `payment-${paymentId}`;
      const original = stored.filter((e) => e.stream === stream);
      for (let i = 0; i < original.length; i++) {
        const events = structuredClone(original);
        let named: string;
        if (op === "edited") {
          events[i]!.metadata.request_id += 1;
          named = events[i]!.id;
        } else if (op === "removed") {
          if (i === events.length - 1) continue; // the tail: only an anchored head shows it
          events.splice(i, 1);
          named = events[i]!.id;
        } else if (op === "reordered") {
          if (i === events.length - 1) continue;
          [events[i], events[i + 1]] = [events[i + 1]!, events[i]!];
          named = "";
        } else {
          if (events.length === 1) continue;
          const prev = i === 0 ? null : (events[i - 1]!.metadata.hash as string);
          const [forged] = chainEvents(stream, prev, [{ ...events[i]!, id: `00000000-0000-4000-8000-forged${String(i).padStart(6, "0")}` }]);
          events.splice(i, 0, { ...events[i]!, ...forged! });
          named = forged!.id;
        }
        const renumbered = events.map((e, k) => ({ ...e, revision: k }));
        const findings = (await audit({ store: eventsStore([...stored.filter((e) => e.stream !== stream), ...renumbered]) }, paymentId)).findings;
        const chain = findings.filter((f) => ["edited", "removed", "reordered", "inserted"].includes(f.kind));
        expect(chain.map((f) => f.kind), `${op} at ${flow}@${i}`).toEqual([op]);
        if (named) expect(chain[0]!.event_id, `${op} at ${flow}@${i}`).toBe(named);
        cases++;
      }
    }
    expect(cases).toBeGreaterThan(25);
  });
});

describe("the library's audits and the catch-up the commands make first", () => {
  const { createEngine, audit: auditOne, auditAll: auditStore, catchUpReadModels } = library;
  /** An in-memory engine (as an embedder makes one, from the package's entry) with a stored-card payment authorized. */
  async function authorizedPayment(capture_method: "manual" | "automatic") {
    const engine = createEngine();
    await engine.openAccount({ external_account_id: "a", processor: "A", currency: "USD" });
    const intent = await engine.createIntent({ external_account_id: "a", amount: "25.00", payment_method_types: "card", capture_method, payment_method_id: "pm_card_visa", external_customer_id: "c" });
    await engine.authorize({ external_account_id: "a", payment_id: intent.payment_id });
    return { engine, intent };
  }

  it("audit and auditAll compare the read models as they are; after catchUpReadModels (exported from cardflow), equal", async () => {
    const { engine, intent } = await authorizedPayment("manual");
    const of = { store: engine.store, readModels: engine.readModels };
    expect((await auditStore(of)).findings.map((f) => f.kind)).toContain("read_model_behind");
    await catchUpReadModels(of);
    expect(await auditStore(of)).toMatchObject({ findings: [], read_models: "equal" });
    expect(await auditOne(of, intent.payment_id)).toMatchObject({ findings: [], read_models: "equal" });
    await engine.close();
  });

  it("a tail of events removed after the read models folded it: the catch-up leaves them, and the audits say so", async () => {
    // a probe: the audit's catch-up rebuilt the read models of a store whose last events were deleted, and reported it clean
    const { engine, intent } = await authorizedPayment("automatic");
    await engine.refund({ external_account_id: "a", payment_id: intent.payment_id, amount: "3.00" });
    await catchUpReadModels({ store: engine.store, readModels: engine.readModels });
    const events = await engine.store.readAll();
    expect(events.slice(-2).map((e) => e.type)).toEqual(["RefundAttempted", "PaymentRefunded"]);
    const cut = { store: eventsStore(events.slice(0, -2)), readModels: engine.readModels };
    const checkpoint = await engine.readModels.checkpoint(paymentsProjection.name);
    await catchUpReadModels(cut);
    expect(await engine.readModels.checkpoint(paymentsProjection.name)).toBe(checkpoint);
    expect((await auditStore(cut)).findings.map((f) => f.kind)).toContain("read_model_ahead");
    expect((await auditOne(cut, intent.payment_id)).findings.map((f) => f.kind)).toEqual(["read_model_mismatch"]);
    await engine.close();
  });
});
