// A processor call slower than the reconciler's grace, across two real server processes on one
// store (SQLite; PostgreSQL) and one sandbox processor: the other process's reconciler asks while the call is on
// its way, hears "never received" and abandons the attempt; then the call lands. The process that
// made it records what the processor did (its late answer) and answers the refund as done; a retry
// with the same Idempotency-Key, through the other process, replays it without a second refund. A
// late answer the payment no longer takes is recorded beside it, for an operator; one that lands
// while another call on the payment is in flight is answered 503 late_answer_pending until recorded.
import { afterAll, describe, expect, it } from "vitest";
import { fileSide, processorSideIn } from "../../src/processors/processor-side.js";
import { client, freshStores, hostDir, merchantKey, startServer, storedEvents, type ServerProcess } from "./servers.js";

const stores = await freshStores("late-answer");
const servers: ServerProcess[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
});

describe.each(["sqlite", "postgres"] as const)("a processor call that lands after another process abandoned its attempt (%s)", (kind) => {
  /**
   * Two servers on a fresh store: `calling` makes the calls, `reconciling` asks about each 3 s after
   * it was opened; a stored-card payment of 10.00 of the account, captured.
   */
  async function twoServersAndAPayment(account: string) {
    const store = stores[kind]();
    const key = await merchantKey(store, account);
    const calling = await startServer(store, { RECONCILE_GRACE_MS: "600000" });
    const reconciling = await startServer(store, { RECONCILE_GRACE_MS: "3000", RECONCILE_INTERVAL_MS: "250" });
    servers.push(calling, reconciling);
    const http = client(key);
    const created = await http.post(calling.url, "/v2/payment/intent", { external_account_id: account, amount: "10.00", payment_method_types: "card", capture_method: "automatic", payment_method_id: "pm_card_visa", external_customer_id: "cus_late" });
    const payment_id: string = created.body.payment_id;
    expect((await http.post(calling.url, "/v2/payment/auth", { external_account_id: account, payment_id })).body.status).toBe("succeeded");
    return { store, key, calling, reconciling, http, payment_id };
  }

  it("is recorded as the processor's late answer, answered as done, and replayed to a retry through the other process", { timeout: 90_000 }, async () => {
    const { store, calling, reconciling, http, payment_id } = await twoServersAndAPayment("acct_late");

    // the sandbox processor receives the next call 4.5 s after it is made: after the reconciler
    // abandons it (3 s, plus a pass of 250 ms), well before the reconciler's second look (3 s after
    // that), so the late answer is the calling process's to record (at 6 s the two raced: CI, stop 42)
    const side = fileSide(processorSideIn(hostDir(store)));
    side.set("faults", "calls", { latency_ms: 4_500 });
    const refund = { external_account_id: "acct_late", payment_id, amount: "4.00" };
    // the fault stays until the call is answered: the server reads it when it makes the call, after
    // its attempt is stored (cleared as soon as the attempt showed, a loaded machine made it undelayed)
    const done = await http.post(calling.url, "/v2/payment/refund", refund, { "idempotency-key": "late-refund" });
    side.set("faults", "calls", undefined);
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body).toMatchObject({ status: "succeeded", amount_refunded: "4.00" });
    const events = (await storedEvents(store)).filter((e) => e.stream === `payment-${payment_id}`);
    const attempt = events.find((e) => e.type === "RefundAttempted")!;
    const attempt_id = (attempt.data as { attempt_id: string }).attempt_id;
    expect(events.slice(-3).map((e) => [e.type, e.metadata.actor, e.metadata.late_answer_to ?? null])).toEqual([
      ["RefundAttempted", expect.stringMatching(/^key_/), null],
      ["AttemptAbandoned", "reconciler", null],
      ["PaymentRefunded", expect.stringMatching(/^key_/), attempt_id],
    ]);

    const retry = await http.post(reconciling.url, "/v2/payment/refund", refund, { "idempotency-key": "late-refund" });
    expect(retry.status).toBe(200);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(retry.body).toMatchObject({ amount_refunded: "4.00" });
    expect(side.entries<{ call: string }>("ledger").filter(([, r]) => r.call === "refund")).toHaveLength(1);
    side.close();
  });

  it("one the payment no longer takes (the whole amount refunded meanwhile) is recorded beside it once, answered as an error, and reported by the audit", { timeout: 90_000 }, async () => {
    const { store, key, calling, reconciling, http, payment_id } = await twoServersAndAPayment("acct_late_moved");
    const account = { external_account_id: "acct_late_moved" };
    const paymentEvents = async () => (await storedEvents(store)).filter((e) => e.stream === `payment-${payment_id}`);

    // the refund's call lands 5 s after it is made; the reconciler abandons it at about 3.25 s
    const side = fileSide(processorSideIn(hostDir(store)));
    side.set("faults", "calls", { latency_ms: 5_000 });
    const late = http.post(calling.url, "/v2/payment/refund", { ...account, payment_id, amount: "4.00" }, { "idempotency-key": "late-moved" });
    // cleared once the attempt is abandoned: long after the server read it for the call
    for (let i = 0; i < 200 && !(await paymentEvents()).some((e) => e.type === "AttemptAbandoned"); i++) await new Promise((r) => setTimeout(r, 50));
    side.set("faults", "calls", undefined);
    // meanwhile the whole amount is refunded through the other process
    const whole = await http.post(reconciling.url, "/v2/payment/refund", { ...account, payment_id, amount: "10.00" });
    expect(whole.status, JSON.stringify(whole.body)).toBe(200);
    expect(whole.body).toMatchObject({ amount_refunded: "10.00" });

    const answer = await late;
    expect(answer.status, JSON.stringify(answer.body)).toBe(500);
    const attempt_id = ((await paymentEvents()).find((e) => e.type === "RefundAttempted")!.data as { attempt_id: string }).attempt_id;
    const refunds = side.entries<{ call: string; refund_id: string }>("ledger").filter(([, r]) => r.call === "refund");
    expect(refunds.map(([k]) => k)).toContain(attempt_id);
    // the payment shows the 10.00 it took; the 4.00 the processor refunded late is beside it, once
    expect((await paymentEvents()).filter((e) => e.type === "PaymentRefunded").map((e) => (e.data as { amount: string }).amount)).toEqual(["10.00"]);
    const unapplied = (await storedEvents(store)).filter((e) => e.stream === `late_answers-${payment_id}`);
    expect(unapplied.map((e) => [e.type, e.data])).toEqual([
      ["LateAnswerUnapplied", expect.objectContaining({ payment_id, attempt_id, attempt_type: "RefundAttempted", answer: [{ type: "PaymentRefunded", data: expect.objectContaining({ amount: "4.00", refund_id: refunds.find(([k]) => k === attempt_id)![1].refund_id }) }] })],
    ]);
    // the reconciler's second look (3 s after the abandonment) finds it recorded: still once
    await new Promise((r) => setTimeout(r, 3_500));
    expect((await storedEvents(store)).filter((e) => e.stream === `late_answers-${payment_id}`)).toHaveLength(1);
    const audit = await fetch(`${reconciling.url}/v2/payment/intent/${payment_id}/audit?external_account_id=acct_late_moved`, { headers: { authorization: `Bearer ${key}` } });
    expect(audit.status).toBe(200);
    const report = (await audit.json()) as { chain: string; findings: { kind: string; message: string }[] };
    expect(report.chain).toBe("intact");
    expect(report.findings).toEqual([expect.objectContaining({ kind: "late_answer_unapplied", subject: `late_answers-${payment_id}` })]);
    expect(report.findings[0]!.message).toContain(`attempt ${attempt_id}`);
    // a retry with the late request's key, through the other server: refused as the answer was, no second refund
    const retry = await http.post(reconciling.url, "/v2/payment/refund", { ...account, payment_id, amount: "4.00" }, { "idempotency-key": "late-moved" });
    expect(retry.status, JSON.stringify(retry.body)).toBe(409);
    expect(side.entries<{ call: string }>("ledger").filter(([, r]) => r.call === "refund")).toHaveLength(refunds.length);
    side.close();
  });

  it("one that lands while another refund's call is in flight is answered 503 late_answer_pending; the reconciler records it once that call is closed, and a retry with its key gets it", { timeout: 90_000 }, async () => {
    const { store, key, calling, reconciling, http, payment_id } = await twoServersAndAPayment("acct_late_waits");
    const account = { external_account_id: "acct_late_waits" };
    const paymentEvents = async () => (await storedEvents(store)).filter((e) => e.stream === `payment-${payment_id}`);
    const until = async (done: (events: Awaited<ReturnType<typeof paymentEvents>>) => boolean) => {
      for (let i = 0; i < 200 && !done(await paymentEvents()); i++) await new Promise((r) => setTimeout(r, 50));
    };

    // refund A's call lands 5 s after it is made; the reconciler abandons it at about 3.25 s
    const side = fileSide(processorSideIn(hostDir(store)));
    side.set("faults", "calls", { latency_ms: 5_000 });
    const a = http.post(calling.url, "/v2/payment/refund", { ...account, payment_id, amount: "4.00" }, { "idempotency-key": "late-a" });
    await until((events) => events.some((e) => e.type === "AttemptAbandoned"));
    // refund B through the other process, its call on its way for 4 s: A lands meanwhile (the
    // fault stays until then: the server reads it when it makes B's call, after B's attempt is stored)
    side.set("faults", "calls", { latency_ms: 4_000 });
    const b = http.post(reconciling.url, "/v2/payment/refund", { ...account, payment_id, amount: "3.00" });
    const waiting = await a;
    side.set("faults", "calls", undefined);
    expect(waiting.status, JSON.stringify(waiting.body)).toBe(503);
    expect(waiting.body.code).toBe("late_answer_pending");
    expect(waiting.headers.get("retry-after")).toBe("30");
    expect((await b).body).toMatchObject({ amount_refunded: "3.00" });
    // the reconciler's second look records A's refund on the payment once B's call is closed
    await until((events) => events.some((e) => e.metadata.late_answer_to !== undefined));
    const late = (await paymentEvents()).find((e) => e.metadata.late_answer_to !== undefined);
    expect(late).toMatchObject({ type: "PaymentRefunded", data: { amount: "4.00" }, metadata: { actor: "reconciler" } });
    const read = await fetch(`${calling.url}/v2/payment/intent/${payment_id}?external_account_id=acct_late_waits`, { headers: { authorization: `Bearer ${key}` } });
    expect(((await read.json()) as { amount_refunded: string }).amount_refunded).toBe("7.00");

    const retry = await http.post(calling.url, "/v2/payment/refund", { ...account, payment_id, amount: "4.00" }, { "idempotency-key": "late-a" });
    expect(retry.status, JSON.stringify(retry.body)).toBe(200);
    expect(retry.body).toMatchObject({ amount_refunded: "7.00" });
    expect(side.entries<{ call: string }>("ledger").filter(([, r]) => r.call === "refund")).toHaveLength(2);
    expect((await storedEvents(store)).filter((e) => e.stream === `late_answers-${payment_id}`)).toEqual([]);
    side.close();
  });
});
