// The history checker on hand-written histories: a valid run reports nothing; each anomaly the
// checker knows is reported, by kind, on the smallest history that has it.
import { describe, expect, it } from "vitest";
import { check } from "../../scripts/chaos/checker/index.js";
import { authorization, CARD, intent, record, scenario } from "./scenario.js";

/** One stored-card payment created, authorized 20.00, captured 15.00, refunded 5.00, read; each step acknowledged before the next. */
function paidAndRefunded() {
  const s = scenario();
  s.event("p1", "PaymentIntentCreated", intent("p1"), "k1", 1);
  s.op("create", "k1", null, [{ at: [0, 10], record: { payment_id: "p1", status: "requires_payment_method", request_id: 1 } }]);
  s.event("p1", "AuthorizationAttempted", { attempt_id: "a1", amount: "20.00" }, "k2", 2).event("p1", "PaymentAuthorized", { ...authorization("20.00"), attempt_id: "a1" }, "k2", 2);
  s.ledger.push(["a1", { call: "authorize", outcome: { kind: "authorized", authorization: authorization("20.00") } }]);
  s.op("authorize", "k2", "p1", [{ at: [20, 30], record: record("p1", "requires_capture", { authorized: "20.00", capturable: "20.00" }) }]);
  s.event("p1", "CaptureAttempted", { attempt_id: "a2", amount: "15.00" }, "k3", 3).event("p1", "PaymentCaptured", { amount: "15.00", authorization: null, attempt_id: "a2" }, "k3", 3);
  s.ledger.push(["a2", { call: "capture", outcome: { kind: "captured" }, amount: "15.00" }]);
  s.op("capture", "k3", "p1", [{ at: [40, 50], record: record("p1", "success", { authorized: "20.00", captured: "15.00" }) }], { body: { amount: "15.00" } });
  s.event("p1", "RefundAttempted", { attempt_id: "a3", amount: "5.00", reason: null }, "k4", 4).event("p1", "PaymentRefunded", { refund_id: "re1", amount: "5.00", reason: null, attempt_id: "a3" }, "k4", 4);
  s.ledger.push(["a3", { call: "refund", refund_id: "re1", amount: "5.00" }]);
  s.op("refund", "k4", "p1", [{ at: [60, 70], record: record("p1", "succeeded", { authorized: "20.00", captured: "15.00", refunded: "5.00" }) }], { body: { amount: "5.00" } });
  s.op("read", null, "p1", [{ at: [80, 90], record: record("p1", "succeeded", { authorized: "20.00", captured: "15.00", refunded: "5.00" }) }]);
  return s;
}

/** A card-form payment (card collected by the client SDK, authorized 20.00), its card not saved yet. */
function cardFormAuthorized() {
  const s = scenario();
  s.event("p1", "PaymentIntentCreated", { ...intent("p1"), payment_method_id: null, stored_card: null, allow_saving_card: true }, "k1", 1);
  s.op("create", "k1", null, [{ at: [0, 10], record: { payment_id: "p1", status: "requires_payment_method", request_id: 1 } }]);
  s.event("p1", "PaymentMethodCollected", { card: CARD, terminal_id: null }, "k2", 2).event("p1", "AuthorizationAttempted", { attempt_id: "a1", amount: "20.00" }, "k2", 2);
  s.event("p1", "PaymentAuthorized", { ...authorization("20.00"), attempt_id: "a1" }, "k2", 2);
  s.ledger.push(["a1", { call: "authorize", outcome: { kind: "authorized", authorization: authorization("20.00") } }]);
  s.op("collect", "k2", "p1", [{ at: [20, 30], record: { payment_id: "p1", status: "requires_capture" } }], { body: { client_secret: "p1_secret_x" } });
  return s;
}

const kinds = (s: ReturnType<typeof scenario>) => check(s).anomalies.map((a) => `${a.check}:${a.kind}`);

describe("valid histories: nothing reported", () => {
  it("sequential steps, each answer the machine's state after its own events", () => {
    expect(check(paidAndRefunded()).anomalies).toEqual([]);
  });

  it("concurrent captures: one takes effect, the other is refused in the status the first left", () => {
    const s = paidAndRefunded();
    s.op("capture", "k5", "p1", [{ at: [41, 52], status: 409, code: "payment_intent_unexpected_state", current_status: "succeeded" }], { body: { amount: "15.00" } });
    expect(kinds(s)).toEqual([]);
  });

  it("a read concurrent with a write may show the state before or after it", () => {
    const s = paidAndRefunded();
    s.op("read", null, "p1", [{ at: [45, 46], record: record("p1", "requires_capture", { authorized: "20.00", capturable: "20.00" }) }]);
    s.op("read", null, "p1", [{ at: [45, 47], record: record("p1", "succeeded", { authorized: "20.00", captured: "15.00" }) }]);
    expect(kinds(s)).toEqual([]);
  });

  it("an unknown outcome, then a retry with the same key replaying the first answer; a resend after ok gets the same bytes", () => {
    const s = scenario();
    s.event("p2", "PaymentIntentCreated", intent("p2"), "k1", 7);
    s.op("create", "k1", null, [
      { at: [0, 5000], status: 0 },
      { at: [5100, 5110], record: { payment_id: "p2", status: "requires_payment_method", request_id: 7 }, request_id: 9, replayed: true, body_sha256: "x" },
      { at: [5200, 5210], record: { payment_id: "p2", status: "requires_payment_method", request_id: 7 }, request_id: 10, replayed: true, body_sha256: "x", resend: true },
    ]);
    expect(kinds(s)).toEqual([]);
  });

  it("effects without a client request (the reconciler closing an attempt) and a 503 during a database restart are expected", () => {
    const s = scenario();
    s.event("p3", "PaymentIntentCreated", intent("p3"), "k1", 1);
    s.op("create", "k1", null, [{ at: [0, 10], record: { payment_id: "p3", status: "requires_payment_method" } }]);
    s.event("p3", "AuthorizationAttempted", { attempt_id: "a1", amount: "20.00" }, "k2", 2);
    s.event("p3", "AttemptAbandoned", { attempt_id: "a1", reason: "never_received" }, null, 3);
    s.op("authorize", "k2", "p3", [{ at: [20, 5000], status: 0 }, { at: [5100, 5200], status: 503, code: "store_unavailable" }]);
    s.fault("database_restart", 5050, 6000);
    expect(kinds(s)).toEqual([]);
  });

  it("a write whose every answer said 'try again' (a 503 while the store was away, 409 while its first try held the key) may have taken effect", () => {
    const s = paidAndRefunded();
    s.event("p1", "RefundAttempted", { attempt_id: "a5", amount: "2.00", reason: null }, "k5", 5);
    s.event("p1", "PaymentRefunded", { refund_id: "re5", amount: "2.00", reason: null, attempt_id: "a5" }, null, 6);
    s.ledger.push(["a5", { call: "refund", refund_id: "re5", amount: "2.00" }]);
    s.op("refund", "k5", "p1", [{ at: [100, 200], status: 503, code: "store_unavailable", outcome: "unknown" }, { at: [300, 310], status: 409, code: "idempotency_key_in_use" }]);
    s.fault("database_restart", 150, 250);
    expect(kinds(s)).toEqual([]);
  });
  // the retry's call: a new one (a6), or the abandoned one made again under its id (a5: src/engine/outcomes.ts sameCallAgain)
  it.each(["a6", "a5"])("a 503 processor_unavailable long after the fault, while the call it left open is open; the retry decided anew once the reconciler abandoned it (its call %s): one effect", (retried) => {
    const s = paidAndRefunded();
    s.fault("processor_timeout", 90, 2000);
    s.at(100).event("p1", "RefundAttempted", { attempt_id: "a5", amount: "2.00", reason: null }, "k5", 5);
    s.at(10_000).event("p1", "AttemptAbandoned", { attempt_id: "a5", reason: "never_received" }, null, 6);
    s.at(12_000).event("p1", "RefundAttempted", { attempt_id: retried, amount: "2.00", reason: null }, "k5", 7).event("p1", "PaymentRefunded", { refund_id: "re6", amount: "2.00", reason: null, attempt_id: retried }, "k5", 7);
    s.ledger.push([retried, { call: "refund", refund_id: "re6", amount: "2.00" }]);
    const busy = { at: [0, 0] as [number, number], status: 503, code: "processor_unavailable", outcome: "unknown" as const };
    s.op("refund", "k5", "p1", [{ ...busy, at: [100, 300] }, { ...busy, at: [9000, 9010] }, { at: [12_000, 12_010], request_id: 7, record: record("p1", "succeeded", { authorized: "20.00", captured: "15.00", refunded: "7.00" }) }], { body: { external_account_id: "acct", payment_id: "p1", amount: "2.00" } });
    expect(kinds(s)).toEqual([]);
  });

  it("a card save retried after its outcome was lost is answered with the card its first try saved: the machine's 'nothing to do', no second effect", () => {
    const s = cardFormAuthorized();
    s.fault("processor_timeout", 90, 500);
    s.at(100).event("p1", "CardSaveAttempted", { attempt_id: "a8", external_customer_id: "cus_1" }, "k8", 8);
    s.at(9000).event("p1", "CardSaved", { payment_method_id: "pm_x", external_account_id: "acct", external_customer_id: "cus_1", card: authorization("1").card, attempt_id: "a8" }, null, 9);
    s.ledger.push(["a8", { call: "save_card", payment_method_id: "pm_x" }]);
    const body = { external_account_id: "acct", payment_id: "p1", external_customer_id: "cus_1" };
    s.op("save_card", "k8", "p1", [{ at: [100, 300], status: 503, code: "processor_unavailable", outcome: "unknown" }, { at: [9500, 9510], ids: ["pm_x"], request_id: 12, replayed: false }], { body });
    expect(kinds(s)).toEqual([]);
    // the same answer where the machine had the card to save: an answer from nowhere
    const nowhere = cardFormAuthorized();
    nowhere.op("save_card", "k8", "p1", [{ at: [100, 110], ids: ["pm_x"], request_id: 12 }], { body });
    expect(kinds(nowhere)).toContain("a:lost_write");
  });

  it("a card presented on a terminal, its answer lost, retried after a cancel was acknowledged: the replayed answer is the first try's, decided in its window", () => {
    const presented = (replayed: boolean) => {
      const s = scenario();
      s.event("p1", "PaymentIntentCreated", { ...intent("p1"), payment_method_types: "card_present", payment_method_id: null, stored_card: null }, "k1", 1);
      s.op("create", "k1", null, [{ at: [0, 10], record: { payment_id: "p1", status: "requires_payment_method", request_id: 1 } }]);
      const terminal = { terminal_id: "tmr_1", terminal_type: "A_async", attempt_id: "a1" };
      s.event("p1", "TerminalAuthorizationAttempted", terminal, "k2", 2).event("p1", "TerminalAuthorizationStarted", terminal, "k2", 2);
      s.ledger.push(["a1", { call: "start_terminal", outcome: { kind: "authorized", authorization: authorization("20.00") } }]);
      s.op("authorize", "k2", "p1", [{ at: [20, 30], record: { payment_id: "p1", status: "payment_method_requested" } }]);
      // the terminal's report (no key): what presenting the card did, while its answer was lost
      s.at(100).event("p1", "PaymentAuthorized", authorization("20.00"), null, 3, "processor:A");
      s.op("present_card", "k3", null, [
        { at: [100, 5100], status: 0 },
        { at: [5300, 5310], record: { payment_id: "p1", status: "requires_capture", amount_authorized: "20.00", amount_capturable: "20.00" }, replayed },
      ]);
      s.at(5200).event("p1", "VoidAttempted", { attempt_id: "a4", cancellation_reason: null }, "k4", 4).event("p1", "PaymentCanceled", { cancellation_reason: null, attempt_id: "a4" }, "k4", 4);
      s.ledger.push(["a4", { call: "void" }]);
      s.op("cancel", "k4", "p1", [{ at: [5150, 5250], record: { payment_id: "p1", status: "canceled" } }]);
      return kinds(s);
    };
    expect(presented(true)).toEqual([]);
    // the same answer, not replayed: decided after the cancel was acknowledged, it is stale
    expect(presented(false)).toEqual(["c:stale_read"]);
  });

  it("an authorize retried once its first try's call was abandoned is decided anew: refused in the status the machine is in then (checked as any refusal)", () => {
    const retryRefused = (current_status: string) => {
      const s = scenario();
      s.event("p1", "PaymentIntentCreated", intent("p1"), "k1", 1);
      s.op("create", "k1", null, [{ at: [0, 10], record: { payment_id: "p1", status: "requires_payment_method", request_id: 1 } }]);
      s.fault("processor_timeout", 90, 500);
      s.at(100).event("p1", "AuthorizationAttempted", { attempt_id: "a6", amount: "20.00" }, "k6", 6);
      s.at(9000).event("p1", "AttemptAbandoned", { attempt_id: "a6", reason: "never_received" }, null, 7);
      s.at(9500).event("p1", "PaymentCanceled", { cancellation_reason: null }, "k7", 8);
      s.op("cancel", "k7", "p1", [{ at: [9500, 9510], record: { payment_id: "p1", status: "canceled" } }]);
      s.op("authorize", "k6", "p1", [{ at: [100, 300], status: 503, code: "processor_unavailable", outcome: "unknown" }, { at: [10_000, 10_010], status: 409, code: "payment_intent_unexpected_state", current_status }], { body: { external_account_id: "acct", payment_id: "p1" } });
      return kinds(s);
    };
    expect(retryRefused("canceled")).toEqual([]);
    expect(retryRefused("requires_capture")).toEqual(["c:answer_not_linearizable"]);
  });
});

describe("invalid histories: each anomaly reported", () => {
  it("(a) an acknowledged write whose effect is not in the store", () => {
    const s = paidAndRefunded();
    s.op("refund", "k9", "p1", [{ at: [100, 110], record: record("p1", "succeeded", { authorized: "20.00", captured: "15.00", refunded: "10.00" }) }]);
    expect(kinds(s)).toContain("a:lost_write");
  });

  it("(a) one key taking effect twice, and (e) more refunded than captured", () => {
    const s = paidAndRefunded();
    s.event("p1", "RefundAttempted", { attempt_id: "a4", amount: "15.00", reason: null }, "k4", 5).event("p1", "PaymentRefunded", { refund_id: "re2", amount: "15.00", reason: null, attempt_id: "a4" }, "k4", 5);
    s.ledger.push(["a4", { call: "refund", refund_id: "re2", amount: "15.00" }]);
    expect(kinds(s)).toEqual(expect.arrayContaining(["a:duplicate_effect", "e:over_refund"]));
  });

  it("(a) an effect under a key no client sent, and a client's event without a key", () => {
    const s = paidAndRefunded();
    s.event("p1", "CardSaveAttempted", { attempt_id: "a5", external_customer_id: "cus_1" }, "ghost", 8);
    const t = paidAndRefunded();
    t.events[0]!.metadata.idempotency_key = null;
    expect(kinds(s)).toContain("a:effect_without_invocation");
    expect(kinds(t)).toContain("a:effect_without_invocation");
  });

  it("(b) events that are not a path of the machine (two captures of one authorization)", () => {
    const s = paidAndRefunded();
    s.event("p1", "CaptureAttempted", { attempt_id: "a6", amount: "20.00" }, "k6", 6);
    s.op("capture", "k6", "p1", [{ at: [100, 110], status: 0 }]);
    expect(kinds(s)).toContain("b:not_a_path");
  });

  it("(c) an operation sent after another was acknowledged took effect before it", () => {
    const s = paidAndRefunded();
    s.event("p1", "RefundAttempted", { attempt_id: "b1", amount: "1.00", reason: null }, "later", 6).event("p1", "PaymentRefunded", { refund_id: "rb", amount: "1.00", reason: null, attempt_id: "b1" }, "later", 6);
    s.event("p1", "RefundAttempted", { attempt_id: "b2", amount: "1.00", reason: null }, "earlier", 5).event("p1", "PaymentRefunded", { refund_id: "rc", amount: "1.00", reason: null, attempt_id: "b2" }, "earlier", 5);
    s.ledger.push(["b1", { call: "refund", refund_id: "rb" }], ["b2", { call: "refund", refund_id: "rc" }]);
    s.op("refund", "earlier", "p1", [{ at: [100, 110], record: record("p1", "succeeded", { authorized: "20.00", captured: "15.00", refunded: "7.00" }) }]);
    s.op("refund", "later", "p1", [{ at: [120, 130], status: 0 }]);
    expect(kinds(s)).toContain("c:real_time_order");
  });

  it("(c) an answer the machine never gave, and (f) a read that misses a write acknowledged before it began", () => {
    const wrong = paidAndRefunded();
    wrong.op("capture", "k7", "p1", [{ at: [100, 110], status: 409, code: "payment_intent_unexpected_state", current_status: "canceled" }]);
    const stale = paidAndRefunded();
    stale.op("read", null, "p1", [{ at: [100, 110], record: record("p1", "requires_capture", { authorized: "20.00", capturable: "20.00" }) }]);
    expect(kinds(wrong)).toEqual(["c:answer_not_linearizable"]);
    expect(kinds(stale)).toEqual(["f:stale_read"]);
  });

  it("(f) a whole list (no more pages) that leaves out a payment in its status for the whole window; one created meanwhile may be missing", () => {
    const s = paidAndRefunded();
    s.op("list_payments", null, null, [{ at: [100, 110], records: [], has_more: false }], { path: "/v2/payments?external_account_id=acct&status=succeeded" });
    const meanwhile = paidAndRefunded();
    meanwhile.op("list_payments", null, null, [{ at: [5, 8], records: [], has_more: false }], { path: "/v2/payments?external_account_id=acct" });
    meanwhile.op("list_payments", null, null, [{ at: [100, 110], records: [], has_more: false }], { path: "/v2/payments?external_account_id=acct&status=requires_capture" });
    expect(kinds(s)).toEqual(["f:stale_read"]);
    expect(kinds(meanwhile)).toEqual([]);
  });

  it("(d) a resend answered other bytes; a retry that ran again; a retry refused after its first try took effect", () => {
    const resend = paidAndRefunded();
    const refunded = record("p1", "succeeded", { authorized: "20.00", captured: "15.00", refunded: "5.00" });
    resend.event("p1", "RefundAttempted", { attempt_id: "a7", amount: "5.00", reason: null }, "k7", 7).event("p1", "PaymentRefunded", { refund_id: "re7", amount: "5.00", reason: null, attempt_id: "a7" }, "k7", 7);
    resend.ledger.push(["a7", { call: "refund", refund_id: "re7", amount: "5.00" }]);
    const twice = { ...refunded, amount_refunded: "10.00" };
    resend.op("refund", "k7", "p1", [{ at: [100, 110], record: twice, body_sha256: "first" }, { at: [120, 130], record: twice, body_sha256: "other", replayed: false, resend: true }]);
    const retry = scenario();
    retry.event("p2", "PaymentIntentCreated", intent("p2"), "k1", 1);
    retry.op("create", "k1", null, [{ at: [0, 10], status: 0 }, { at: [20, 30], record: { payment_id: "p2", status: "requires_payment_method" }, request_id: 2, replayed: false }]);
    const refused = paidAndRefunded();
    refused.event("p1", "CardSaveAttempted", { attempt_id: "a8", external_customer_id: "cus_1" }, "k8", 8);
    refused.event("p1", "CardSaved", { payment_method_id: "pm_x", external_account_id: "acct", external_customer_id: "cus_1", card: authorization("1").card, attempt_id: "a8" }, null, 9);
    refused.ledger.push(["a8", { call: "save_card", payment_method_id: "pm_x" }]);
    refused.op("save_card", "k8", "p1", [{ at: [100, 5000], status: 0 }, { at: [5100, 5200], status: 409, code: "payment_intent_unexpected_state", current_status: "succeeded", request_id: 12 }]);
    expect(kinds(retry)).toContain("d:retry_reexecuted");
    expect(kinds(refused)).toContain("d:retry_refused_after_effect");
    expect(kinds(resend)).toEqual(["d:resend_answer_differs"]);
  });

  it("(e) the processor's ledger and cardflow's disagree: a charge without its record, a record without its charge, an open attempt, another amount", () => {
    const charge = paidAndRefunded();
    charge.ledger.push(["a9", { call: "refund", refund_id: "re9", amount: "1.00" }]);
    const noCharge = paidAndRefunded();
    noCharge.ledger.splice(2, 1);
    const open = paidAndRefunded();
    open.event("p1", "RefundAttempted", { attempt_id: "a10", amount: "1.00", reason: null }, "k10", 10);
    open.op("refund", "k10", "p1", [{ at: [100, 5000], status: 0 }]);
    const amount = paidAndRefunded();
    amount.ledger[1]![1].amount = "16.00";
    // abandoned as never received, then the processor's late answer recorded: no anomaly; its amount still compared
    const lateAnswer = (amount: string) => {
      const s = paidAndRefunded();
      s.event("p1", "RefundAttempted", { attempt_id: "a9", amount: "1.00", reason: null }, "k9", 9).event("p1", "AttemptAbandoned", { attempt_id: "a9", reason: "never_received" }, null, 10);
      s.event("p1", "PaymentRefunded", { refund_id: "re9", amount, reason: null }, "k9", 9);
      s.events.at(-1)!.metadata.late_answer_to = "a9";
      s.ledger.push(["a9", { call: "refund", refund_id: "re9", amount: "1.00" }]);
      s.op("refund", "k9", "p1", [{ at: [100, 5000], status: 0 }]);
      return s;
    };
    expect(kinds(lateAnswer("1.00"))).toEqual([]);
    expect(kinds(lateAnswer("2.00"))).toEqual(["e:ledger_mismatch"]);
    // abandoned as never received, then a retry made the same call again (its attempt id, the processor's key):
    // the processor's one refund is the call's outcome; its amount still compared
    const again = (amount: string) => {
      const s = paidAndRefunded();
      s.event("p1", "RefundAttempted", { attempt_id: "a9", amount: "1.00", reason: null }, "k9", 9).event("p1", "AttemptAbandoned", { attempt_id: "a9", reason: "never_received" }, null, 10);
      s.event("p1", "RefundAttempted", { attempt_id: "a9", amount: "1.00", reason: null }, "k9", 11);
      s.event("p1", "PaymentRefunded", { refund_id: "re9", amount, reason: null, attempt_id: "a9" }, "k9", 11);
      s.ledger.push(["a9", { call: "refund", refund_id: "re9", amount: "1.00" }]);
      s.op("refund", "k9", "p1", [{ at: [100, 5000], status: 0 }]);
      return s;
    };
    expect(kinds(again("1.00"))).toEqual([]);
    expect(kinds(again("2.00"))).toEqual(["e:ledger_mismatch"]);
    // abandoned as never received, then the processor acted and the payment no longer took it: beside it, for an operator
    const unapplied = paidAndRefunded();
    unapplied.event("p1", "RefundAttempted", { attempt_id: "a9", amount: "1.00", reason: null }, "k9", 9).event("p1", "AttemptAbandoned", { attempt_id: "a9", reason: "never_received" }, null, 10);
    const last = unapplied.events.at(-1)!;
    const answer = [{ type: "PaymentRefunded", data: { refund_id: "re9", amount: "1.00", reason: null } }];
    unapplied.events.push({ ...last, id: "late-a9", stream: "late_answers-p1", revision: 0, position: last.position + 1, type: "LateAnswerUnapplied", data: { payment_id: "p1", attempt_id: "a9", attempt_type: "RefundAttempted", answer, reason: "PaymentRefunded not allowed" } });
    unapplied.ledger.push(["a9", { call: "refund", refund_id: "re9", amount: "1.00" }]);
    unapplied.op("refund", "k9", "p1", [{ at: [100, 5000], status: 0 }]);
    expect(kinds(unapplied)).toEqual(["e:late_answer_unapplied"]);
    expect(kinds(charge)).toEqual(["e:charge_without_record"]);
    expect(kinds(noCharge)).toEqual(["e:record_without_charge"]);
    expect(kinds(open)).toEqual(["e:open_attempt"]);
    expect(kinds(amount)).toEqual(["e:ledger_mismatch"]);
  });

  it("(f) a 503 late_answer_pending is attributed to the late call a fault left open, like processor_unavailable", () => {
    // the call a5 at 5 s, slowed by the fault (a delay: no outage), abandoned at 14 s, lands at 16 s while another call is in flight; recorded later
    const withCall = (attempt: boolean) => {
      const s = paidAndRefunded();
      s.fault("processor_delay", 4900, 6000);
      if (attempt) {
        s.at(5000).event("p1", "RefundAttempted", { attempt_id: "a5", amount: "2.00", reason: null }, "k5", 5);
        s.at(14_000).event("p1", "AttemptAbandoned", { attempt_id: "a5", reason: "never_received" }, null, 6);
        s.at(25_000).event("p1", "PaymentRefunded", { refund_id: "re5", amount: "2.00", reason: null }, "k5", 5);
        s.events.at(-1)!.metadata.late_answer_to = "a5";
        s.ledger.push(["a5", { call: "refund", refund_id: "re5", amount: "2.00" }]);
      }
      s.op("refund", "k5", "p1", [{ at: [5000, 16_000], status: 503, code: "late_answer_pending", outcome: "unknown" }]);
      return s;
    };
    expect(kinds(withCall(true))).toEqual([]);
    expect(kinds(withCall(false))).toEqual(["f:unavailable_outside_outage"]);
  });

  it("(f) a 503 processor_unavailable when no call a fault left open was open on its payment", () => {
    const s = paidAndRefunded();
    s.fault("processor_timeout", 90, 2000);
    s.op("refund", "k12", "p1", [{ at: [9000, 9010], status: 503, code: "processor_unavailable", outcome: "unknown" }]);
    // an attempt open then, but opened after the fault ended and closed by the reconciler: not the fault's
    const late = paidAndRefunded();
    late.fault("processor_timeout", 90, 2000);
    late.at(5000).event("p1", "RefundAttempted", { attempt_id: "a5", amount: "2.00", reason: null }, "k5", 5);
    late.at(13_000).event("p1", "AttemptAbandoned", { attempt_id: "a5", reason: "never_received" }, null, 6);
    late.op("refund", "k5", "p1", [{ at: [5000, 5100], status: 503, code: "processor_unavailable", outcome: "unknown" }, { at: [9000, 9010], status: 503, code: "processor_unavailable", outcome: "unknown" }]);
    expect(kinds(s)).toEqual(["f:unavailable_outside_outage"]);
    expect(kinds(late)).toEqual(["f:unavailable_outside_outage", "f:unavailable_outside_outage"]);
  });

  it("(f) a 500, a 503 outside an outage, a card list missing a card saved before it", () => {
    const s = paidAndRefunded();
    s.op("capture", "k11", "p1", [{ at: [100, 110], status: 500, code: "internal" }]);
    s.op("refund", "k12", "p1", [{ at: [120, 130], status: 503, code: "store_unavailable" }]);
    s.op("present_card", "k14", null, [{ at: [125, 128], status: 503, code: "read_model_behind" }]); // a refusal: not counted
    s.op("save_card", "k13", "p1", [{ at: [140, 150], ids: ["pm_1"] }], { body: { external_customer_id: "cus_1" } });
    s.op("list_cards", null, null, [{ at: [160, 170], ids: [] }], { path: "/v1/customer/card?external_account_id=acct&external_customer_id=cus_1" });
    expect(kinds(s)).toEqual(expect.arrayContaining(["f:server_error", "f:unavailable_outside_outage", "f:stale_read"]));
    expect(kinds(s).filter((k) => k === "f:unavailable_outside_outage")).toHaveLength(1);
  });
});
