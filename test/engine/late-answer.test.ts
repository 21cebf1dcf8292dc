// A processor call that lands after another process's reconciler abandoned its attempt: the
// reconciler asked while the call was still on its way (slower than the grace), heard "never
// received" and abandoned it; then the processor acted. What it did is recorded as its late answer
// (the outcome naming no attempt, `late_answer_to` in its metadata), so the money it moved is on the
// payment's record; the command answers it, and a retry with the same key replays it without a
// second call. A retry that comes before the call lands makes the same call again, under its attempt
// id: the processor acts once. Engines on one store: in one process the reconciler waits for the
// payment's lock.
import { describe, expect, it } from "vitest";
import { audit, auditAll } from "../../src/audit/audit.js";
import { formatAudit } from "../../src/audit/format.js";
import { LateAnswerWaits, UnappliedLateAnswer } from "../../src/index.js";
import { processesOnOneStore, until } from "./processes-on-one-store.js";

const { clock, side, simulators, store, newProcess, landsWhileAnotherInFlight } = processesOnOneStore({ reconcileGraceMs: 8_000 });
const engine = newProcess();
const other = newProcess();
// a process whose feed of the store (readAll: the reconciler's index) stops at `feedEnd`, as a process behind the others
let feedEnd = Infinity;
const behind = newProcess(undefined, (store) =>
  new Proxy(store, {
    get(target, name) {
      if (name === "readAll") return async (...args: Parameters<typeof store.readAll>) => (await target.readAll(...args)).filter((e) => e.position <= feedEnd);
      const value = Reflect.get(target, name, target) as unknown;
      return typeof value === "function" ? value.bind(target) : value;
    },
  }),
);
// a process that dies once its refund call answered, before it records anything
const dying = newProcess((at, attempt) => {
  if (at === "after_call" && attempt.type === "RefundAttempted") throw new Error("killed after the processor refunded");
});

// a process whose calls in flight are its own (another simulator over the same ledger)
const apart = newProcess(undefined, undefined, true);

const ledger = (call: string) => simulators.ledger.entries().filter(([, r]) => r.call === call);
const stream = (paymentId: string) => store.readStream(`payment-${paymentId}`);

async function paid(account: string, capture_method: "automatic" | "manual") {
  await engine.openAccount({ external_account_id: account, processor: "B" });
  const created = await engine.createIntent({ external_account_id: account, amount: "10.00", payment_method_types: "card", capture_method, payment_method_id: "pm_card_visa", external_customer_id: "cus_late" });
  return (created as { payment_id: string }).payment_id;
}

/** The call is made 12 s late; the other engine's reconciler (grace 8 s) abandons its attempt at 9 s; it lands at 12 s. */
async function abandonedThenLanded<T>(paymentId: string, attemptType: string, command: () => Promise<T>): Promise<PromiseSettledResult<T>> {
  side.set("faults", "calls", { latency_ms: 12_000 });
  const answer = command().then(
    (value) => ({ status: "fulfilled" as const, value }),
    (reason: unknown) => ({ status: "rejected" as const, reason }),
  );
  await until(async () => (await stream(paymentId)).some((e) => e.type === attemptType));
  side.set("faults", "calls", undefined);
  await clock.advance(9_000);
  const pass = await other.reconcile();
  expect(pass.resolved).toMatchObject([{ payment_id: paymentId, open: attemptType, processor: "never_received", appended: ["AttemptAbandoned"] }]);
  await clock.advance(3_000);
  return answer;
}

describe("a processor call that lands after its attempt was abandoned", () => {
  // first: `behind` indexes every abandonment since the file began, and the later tests leave some
  it("a reconciler behind the store, due to ask about the abandoned call, leaves the call made again alone until its own grace", { timeout: 10_000 }, async () => {
    const account = "acct_late_behind";
    const payment_id = await paid(account, "automatic");
    await engine.authorize({ external_account_id: account, payment_id });
    const refund = { external_account_id: account, payment_id, amount: "5.00" };
    side.set("faults", "calls", { latency_ms: 12_000 });
    const first = engine.refund(refund, { idempotency_key: "late-behind" });
    await until(async () => (await stream(payment_id)).some((e) => e.type === "RefundAttempted"));
    side.set("faults", "calls", undefined);
    // `behind` indexes the attempt open, then its feed stops there
    expect((await behind.reconcile()).resolved).toEqual([]);
    feedEnd = (await stream(payment_id)).at(-1)!.position;
    await clock.advance(9_000);
    expect((await other.reconcile()).resolved).toMatchObject([{ payment_id, processor: "never_received", appended: ["AttemptAbandoned"] }]);
    const retry = other.refund(refund, { idempotency_key: "late-behind" });
    await until(async () => (await stream(payment_id)).filter((e) => e.type === "RefundAttempted").length === 2);
    // `behind` still sees the first attempt open since 0 s (due): the call made again under its id is not
    expect((await behind.reconcile()).resolved).toEqual([]);
    expect((await stream(payment_id)).at(-1)!.type).toBe("RefundAttempted");
    feedEnd = Infinity;
    await clock.advance(3_000);
    await expect(retry).resolves.toMatchObject({ amount_refunded: "5.00" });
    await first;
    expect((await stream(payment_id)).slice(-2).map((e) => e.type)).toEqual(["RefundAttempted", "PaymentRefunded"]);
  });

  it("a refund: recorded as the processor's late answer, answered, replayed to a retry without a second call", { timeout: 10_000 }, async () => {
    const payment_id = await paid("acct_late_refund", "automatic");
    await engine.authorize({ external_account_id: "acct_late_refund", payment_id });
    const refund = () => engine.refund({ external_account_id: "acct_late_refund", payment_id, amount: "4.00" }, { idempotency_key: "late-refund" });
    const refundsBefore = ledger("refund").length;

    expect(await abandonedThenLanded(payment_id, "RefundAttempted", refund)).toMatchObject({ value: { status: "succeeded", amount_refunded: "4.00" } });
    expect(ledger("refund").length - refundsBefore).toBe(1);
    const events = await stream(payment_id);
    const attempt = events.find((e) => e.type === "RefundAttempted")!;
    const attempt_id = (attempt.data as { attempt_id: string }).attempt_id;
    expect(events.slice(-3).map((e) => e.type)).toEqual(["RefundAttempted", "AttemptAbandoned", "PaymentRefunded"]);
    const late = events.at(-1)!;
    expect(late.data).toMatchObject({ amount: "4.00" });
    expect(late.data).not.toHaveProperty("attempt_id");
    expect(late.metadata).toMatchObject({ late_answer_to: attempt_id, idempotency_key: "late-refund" });

    // a retry with the key: the recorded answer, no second refund
    await expect(refund()).resolves.toMatchObject({ amount_refunded: "4.00" });
    expect(ledger("refund").length - refundsBefore).toBe(1);
    // the store audits clean (every event allowed by the machine); the timeline links the answer to its call
    expect((await auditAll({ store, readModels: undefined })).findings).toEqual([]);
    const audited = await audit({ store, readModels: undefined }, payment_id);
    expect(audited.timeline.at(-1)).toMatchObject({ type: "PaymentRefunded", late_answer_to: attempt_id, status_after: "succeeded", amounts_after: { refunded: "4.00" } });
    expect(formatAudit(audited)).toContain(`PaymentRefunded (late answer to ${attempt_id})`);
  });

  it("a capture: the late capture moves the payment to succeeded", { timeout: 10_000 }, async () => {
    const payment_id = await paid("acct_late_capture", "manual");
    await engine.authorize({ external_account_id: "acct_late_capture", payment_id });
    const capture = () => engine.capture({ external_account_id: "acct_late_capture", payment_id, amount: "10.00" }, { idempotency_key: "late-capture" });
    expect(await abandonedThenLanded(payment_id, "CaptureAttempted", capture)).toMatchObject({ value: { status: "succeeded", amount_captured: "10.00" } });
    expect((await stream(payment_id)).slice(-2).map((e) => [e.type, e.metadata.late_answer_to ?? null])).toEqual([
      ["AttemptAbandoned", null],
      ["PaymentCaptured", expect.stringMatching(/^att_/)],
    ]);
    await expect(capture()).resolves.toMatchObject({ status: "succeeded", amount_captured: "10.00" });
    expect(ledger("capture").filter(([, r]) => JSON.stringify(r).includes("10.00"))).toHaveLength(1);
  });

  it("its process died before recording it: the reconciler's second look, a grace after the abandonment, records it", { timeout: 10_000 }, async () => {
    const payment_id = await paid("acct_late_died", "automatic");
    await engine.authorize({ external_account_id: "acct_late_died", payment_id });
    const refund = () => dying.refund({ external_account_id: "acct_late_died", payment_id, amount: "3.00" }, { idempotency_key: "late-died" });
    expect(await abandonedThenLanded(payment_id, "RefundAttempted", refund)).toMatchObject({ status: "rejected", reason: { message: "killed after the processor refunded" } });
    const refunded = () => ledger("refund").filter(([, r]) => JSON.stringify(r).includes("3.00"));
    expect(refunded()).toHaveLength(1);
    expect((await engine.getPayment({ external_account_id: "acct_late_died", payment_id })).amount_refunded).toBe("0.00"); // the money moved, unrecorded

    // 12 s after the attempt, 3 s after its abandonment: not looked at again yet
    expect((await other.reconcile()).resolved).toEqual([]);
    await clock.advance(5_000); // a grace after the abandonment
    const pass = await other.reconcile();
    const attempt_id = ((await stream(payment_id)).find((e) => e.type === "RefundAttempted")!.data as { attempt_id: string }).attempt_id;
    expect(pass.resolved).toEqual([{ payment_id, open: "RefundAttempted", attempt_id, processor: "refund", appended: ["PaymentRefunded"], late: true }]);
    expect((await engine.getPayment({ external_account_id: "acct_late_died", payment_id })).amount_refunded).toBe("3.00");
    expect((await stream(payment_id)).at(-1)!.metadata).toMatchObject({ late_answer_to: attempt_id, actor: "reconciler" });
    // once: the next pass and a retry with the key look no further
    expect((await other.reconcile()).resolved).toEqual([]);
    await expect(engine.refund({ external_account_id: "acct_late_died", payment_id, amount: "3.00" }, { idempotency_key: "late-died" })).resolves.toMatchObject({ amount_refunded: "3.00" });
    expect(refunded()).toHaveLength(1);
  });

  it("a payment that moved on meanwhile does not take it: recorded once beside it for an operator, never answered as done, reported by the audit", { timeout: 10_000 }, async () => {
    const payment_id = await paid("acct_late_moved", "automatic");
    await engine.authorize({ external_account_id: "acct_late_moved", payment_id });
    side.set("faults", "calls", { latency_ms: 12_000 });
    const late = engine.refund({ external_account_id: "acct_late_moved", payment_id, amount: "4.00" }, { idempotency_key: "late-moved" }).catch((error: Error) => error);
    await until(async () => (await stream(payment_id)).some((e) => e.type === "RefundAttempted"));
    const attempt_id = ((await stream(payment_id)).find((e) => e.type === "RefundAttempted")!.data as { attempt_id: string }).attempt_id;
    side.set("faults", "calls", undefined);
    await clock.advance(9_000);
    expect((await other.reconcile()).resolved).toHaveLength(1);
    // the whole amount refunded through the other process meanwhile
    await expect(other.refund({ external_account_id: "acct_late_moved", payment_id, amount: "10.00" })).resolves.toMatchObject({ amount_refunded: "10.00" });
    await clock.advance(3_000);
    const error = await late;
    expect(error).toBeInstanceOf(UnappliedLateAnswer);
    expect((error as UnappliedLateAnswer).data).toMatchObject({ payment_id, attempt_id, attempt_type: "RefundAttempted" });
    expect((error as Error).message).toContain(`the processor answered attempt ${attempt_id} after it was abandoned, and the payment no longer takes its answer (PaymentRefunded`);
    expect((error as Error).message).toContain(`recorded for an operator in late_answers-${payment_id}`);
    expect((await stream(payment_id)).at(-1)!.type).toBe("PaymentRefunded");
    expect((await engine.getPayment({ external_account_id: "acct_late_moved", payment_id })).amount_refunded).toBe("10.00");
    // what the processor did, beside the payment: its refund id and amount, the attempt, why the payment did not take it
    const refundAtProcessor = ledger("refund").find(([key]) => key === attempt_id)![1] as { refund_id: string };
    const recorded = await store.readStream(`late_answers-${payment_id}`);
    expect(recorded).toHaveLength(1);
    expect(recorded[0]).toMatchObject({
      type: "LateAnswerUnapplied",
      data: { payment_id, attempt_id, attempt_type: "RefundAttempted", answer: [{ type: "PaymentRefunded", data: { refund_id: refundAtProcessor.refund_id, amount: "4.00" } }] },
      metadata: { late_answer_to: attempt_id, idempotency_key: "late-moved" },
    });
    expect((recorded[0]!.data as { reason: string }).reason).toMatch(/PaymentRefunded not allowed/);
    // the reconciler's second look, a grace after the abandonment, is dropped once the record is indexed: nothing reported, nothing written
    await clock.advance(5_000);
    expect((await other.reconcile()).resolved).toEqual([]);
    expect((await engine.reconcile()).resolved).toEqual([]);
    expect(await store.readStream(`late_answers-${payment_id}`)).toHaveLength(1);
    // the audit of the payment, and of the whole store, report it for an operator
    const finding = { kind: "late_answer_unapplied", subject: `late_answers-${payment_id}`, event_id: recorded[0]!.id };
    const one = await audit({ store }, payment_id);
    expect(one.findings).toEqual([expect.objectContaining(finding)]);
    expect(one.findings[0]!.message).toContain(`the processor answered attempt ${attempt_id} after it was abandoned`);
    expect((await auditAll({ store })).findings.filter((f) => f.kind === "late_answer_unapplied")).toEqual([expect.objectContaining(finding)]);
    // an operator settles it with the processor and says so (library): once; the audit is clean
    await expect(engine.settleLateAnswer({ payment_id, attempt_id, note: " " })).rejects.toMatchObject({ status: 400, param: "note" });
    // what an untyped caller may send: each field named (not a TypeError)
    await expect(engine.settleLateAnswer({} as never)).rejects.toMatchObject({ name: "InvalidRequest", param: "payment_id" });
    await expect(engine.settleLateAnswer({ payment_id, attempt_id } as never)).rejects.toMatchObject({ name: "InvalidRequest", param: "note", code: "parameter_missing" });
    await expect(engine.settleLateAnswer({ payment_id, attempt_id: "att_none", note: "done" })).rejects.toMatchObject({ status: 404 });
    await engine.settleLateAnswer({ payment_id, attempt_id, note: "refund voided at the processor" }, { actor: "ops" });
    await other.settleLateAnswer({ payment_id, attempt_id, note: "again" });
    expect((await store.readStream(`late_answers-${payment_id}`)).map((e) => [e.type, e.metadata.actor])).toEqual([
      ["LateAnswerUnapplied", "library"],
      ["LateAnswerSettled", "ops"],
    ]);
    expect((await audit({ store }, payment_id)).findings).toEqual([]);
    // a retry with the first try's key is decided anew and refused where the machine refused the answer: no second refund
    const refunds = ledger("refund").length;
    await expect(engine.refund({ external_account_id: "acct_late_moved", payment_id, amount: "4.00" }, { idempotency_key: "late-moved" })).rejects.toMatchObject({ status: 409, code: "payment_intent_unexpected_state" });
    expect(ledger("refund").length).toBe(refunds);
  });

  it("its process died before recording one the payment no longer takes: the reconciler's second look records it beside the payment and says so", { timeout: 10_000 }, async () => {
    const account = "acct_late_died_moved";
    const payment_id = await paid(account, "automatic");
    await engine.authorize({ external_account_id: account, payment_id });
    const late = () => dying.refund({ external_account_id: account, payment_id, amount: "3.00" }, { idempotency_key: "late-died-moved" });
    expect(await abandonedThenLanded(payment_id, "RefundAttempted", late)).toMatchObject({ status: "rejected", reason: { message: "killed after the processor refunded" } });
    await expect(other.refund({ external_account_id: account, payment_id, amount: "10.00" })).resolves.toMatchObject({ amount_refunded: "10.00" });
    const attempt_id = ((await stream(payment_id)).find((e) => e.type === "RefundAttempted")!.data as { attempt_id: string }).attempt_id;

    await clock.advance(5_000); // a grace after the abandonment
    const resolved = [{ payment_id, open: "RefundAttempted", attempt_id, processor: "refund", appended: ["LateAnswerUnapplied"], late: true, unapplied: true }];
    // a dry run says what the pass will append, and appends nothing
    expect((await other.reconcile({ dryRun: true })).resolved).toEqual(resolved);
    expect(await store.readStream(`late_answers-${payment_id}`)).toEqual([]);
    expect((await other.reconcile()).resolved).toEqual(resolved);
    expect((await store.readStream(`late_answers-${payment_id}`)).map((e) => [e.type, e.metadata.actor, e.metadata.late_answer_to])).toEqual([["LateAnswerUnapplied", "reconciler", attempt_id]]);
    // every process's next pass has indexed it: no second look left anywhere
    expect((await engine.reconcile()).resolved).toEqual([]);
    expect((await other.reconcile()).resolved).toEqual([]);
    expect(await store.readStream(`late_answers-${payment_id}`)).toHaveLength(1);
  });

  it("one that lands while another call on the payment is in flight waits: the second look records it once that call is closed", { timeout: 10_000 }, async () => {
    const account = "acct_late_waits";
    const payment_id = await paid(account, "automatic");
    await engine.authorize({ external_account_id: account, payment_id });
    // refund A's call lands at 12 s, abandoned at 9 s (its second look is due at 17 s), while
    // refund B's, made at 10 s through the other process, is on its way until 25 s
    const { a: error, b } = await landsWhileAnotherInFlight(
      payment_id,
      () => engine.refund({ external_account_id: account, payment_id, amount: "4.00" }).catch((error: Error) => error),
      async () => expect((await other.reconcile()).resolved).toHaveLength(1),
      () => other.refund({ external_account_id: account, payment_id, amount: "3.00" }),
    );
    // nothing can be decided yet, nothing recorded
    expect(error).toBeInstanceOf(LateAnswerWaits);
    expect((error as Error).message).toMatch(/could not be recorded yet: another call \(att_\w+\) is in flight/);
    // a third process's second look at 17 s waits for B (younger than the grace: not the reconciler's
    // yet); B's own process would wait for its lock on the payment until B answers
    await clock.advance(5_000);
    const mine = async (pass: Promise<{ resolved: { payment_id: string }[] }>) => (await pass).resolved.filter((r) => r.payment_id === payment_id);
    expect(await mine(dying.reconcile())).toEqual([]);
    // B answers at 25 s; the next pass records A's late answer on the payment as it then stands
    await clock.advance(8_000);
    await expect(b).resolves.toMatchObject({ amount_refunded: "3.00" });
    const attempt_a = ((await stream(payment_id)).find((e) => e.type === "RefundAttempted")!.data as { attempt_id: string }).attempt_id;
    expect(await mine(dying.reconcile())).toMatchObject([{ payment_id, attempt_id: attempt_a, processor: "refund", late: true, appended: ["PaymentRefunded"] }]);
    expect((await stream(payment_id)).at(-1)).toMatchObject({ type: "PaymentRefunded", data: { amount: "4.00" }, metadata: { late_answer_to: attempt_a } });
    expect((await engine.getPayment({ external_account_id: account, payment_id })).amount_refunded).toBe("7.00");
    expect(await store.readStream(`late_answers-${payment_id}`)).toEqual([]);
    expect(await mine(dying.reconcile())).toEqual([]);
    expect(await mine(other.reconcile())).toEqual([]);
  });

  it("a retry while the abandoned call is still on its way: the same call made again under its attempt id, one refund at the processor", { timeout: 10_000 }, async () => {
    const account = "acct_late_retry";
    const payment_id = await paid(account, "automatic");
    await engine.authorize({ external_account_id: account, payment_id });
    const refund = { external_account_id: account, payment_id, amount: "4.00" };
    const refundsBefore = ledger("refund").length;
    side.set("faults", "calls", { latency_ms: 12_000 });
    const first = engine.refund(refund, { idempotency_key: "late-retry" });
    await until(async () => (await stream(payment_id)).some((e) => e.type === "RefundAttempted"));
    side.set("faults", "calls", undefined);
    await clock.advance(9_000);
    expect((await other.reconcile()).resolved).toMatchObject([{ payment_id, processor: "never_received", appended: ["AttemptAbandoned"] }]);

    // the client retries through the other process before the call lands: decided anew, the same
    // call made again under its attempt id (the processor's key), so the processor acts once for both
    const retry = other.refund(refund, { idempotency_key: "late-retry" });
    await until(async () => (await stream(payment_id)).filter((e) => e.type === "RefundAttempted").length === 2);
    const [attempt_id, again] = (await stream(payment_id)).filter((e) => e.type === "RefundAttempted").map((e) => (e.data as { attempt_id: string }).attempt_id);
    expect(again).toBe(attempt_id);
    await clock.advance(3_000);
    await expect(retry).resolves.toMatchObject({ status: "succeeded", amount_refunded: "4.00" });
    await expect(first).resolves.toMatchObject({ status: "succeeded" });
    expect(ledger("refund").length - refundsBefore).toBe(1);
    // the call made again recorded the refund; the first call's answer is no second record of it
    expect((await stream(payment_id)).slice(-4).map((e) => [e.type, (e.data as { attempt_id?: string }).attempt_id ?? null, e.metadata.actor, e.metadata.late_answer_to ?? null])).toEqual([
      ["RefundAttempted", attempt_id, "library", null],
      ["AttemptAbandoned", attempt_id, "reconciler", null],
      ["RefundAttempted", attempt_id, "library", null],
      ["PaymentRefunded", attempt_id, "library", null],
    ]);
    expect((await engine.getPayment({ external_account_id: account, payment_id })).amount_refunded).toBe("4.00");
    // the abandoned call's second look, a grace after its abandonment, finds its key taken by the retry: nothing to record
    await clock.advance(8_000);
    expect((await other.reconcile()).resolved).toEqual([]);
    // a third try replays the answer
    await expect(engine.refund(refund, { idempotency_key: "late-retry" })).resolves.toMatchObject({ amount_refunded: "4.00" });
    expect(ledger("refund").length - refundsBefore).toBe(1);
    // clean but for the late answer another payment (the test before) did not take
    expect((await auditAll({ store, readModels: undefined })).findings.filter((f) => f.kind !== "late_answer_unapplied")).toEqual([]);
    expect(await store.readStream(`late_answers-${payment_id}`)).toEqual([]);
  });

  /** Refund 4.00 with the key: its call 12 s late, abandoned at 9 s, made again by a retry through a process of its own, whose call takes `retryLatencyMs`. */
  async function madeAgainWhileOnItsWay(account: string, retryLatencyMs: number) {
    const payment_id = await paid(account, "automatic");
    await engine.authorize({ external_account_id: account, payment_id });
    const refund = { external_account_id: account, payment_id, amount: "4.00" };
    const refundsBefore = ledger("refund").length;
    side.set("faults", "calls", { latency_ms: 12_000 });
    const first = engine.refund(refund, { idempotency_key: `${account}-key` }).catch((error: Error) => error);
    await until(async () => (await stream(payment_id)).some((e) => e.type === "RefundAttempted"));
    side.set("faults", "calls", { latency_ms: retryLatencyMs });
    await clock.advance(9_000);
    expect((await other.reconcile()).resolved).toMatchObject([{ payment_id, processor: "never_received" }]);
    const retry = apart.refund(refund, { idempotency_key: `${account}-key` });
    await until(async () => (await stream(payment_id)).filter((e) => e.type === "RefundAttempted").length === 2);
    side.set("faults", "calls", undefined);
    await clock.advance(3_000); // the first call lands at 12 s, the one made again still on its way
    return { payment_id, refund, first, retry, refunds: () => ledger("refund").length - refundsBefore };
  }

  it("the first call lands while the call made again is still on its way: its command waits for that call's outcome and answers with it", { timeout: 10_000 }, async () => {
    const { first, retry, refunds } = await madeAgainWhileOnItsWay("acct_late_again_wait", 5_000);
    await new Promise((r) => setTimeout(r, 100)); // the first command looks at the store, the call made again still open
    await clock.advance(2_000); // the call made again answers at 14 s
    await expect(retry).resolves.toMatchObject({ amount_refunded: "4.00" });
    await expect(first).resolves.toMatchObject({ status: "succeeded", amount_refunded: "4.00" });
    expect(refunds()).toBe(1);
  });

  it("past the bounded wait, the first call's command fails with LateAnswerWaits naming the call made again; a retry with the key then gets its outcome", { timeout: 10_000 }, async () => {
    const { payment_id, refund, first, retry, refunds } = await madeAgainWhileOnItsWay("acct_late_again_busy", 20_000);
    const error = await first;
    expect(error).toBeInstanceOf(LateAnswerWaits);
    expect((error as Error).message).toMatch(new RegExp(`^payment ${payment_id}: the processor answered attempt att_\\w+ after it was abandoned, and a retry made the same call again, still in flight`));
    await clock.advance(20_000);
    await expect(retry).resolves.toMatchObject({ amount_refunded: "4.00" });
    await expect(engine.refund(refund, { idempotency_key: "acct_late_again_busy-key" })).resolves.toMatchObject({ amount_refunded: "4.00" });
    expect(refunds()).toBe(1);
    expect((await stream(payment_id)).filter((e) => e.type === "PaymentRefunded")).toHaveLength(1);
  });
});
