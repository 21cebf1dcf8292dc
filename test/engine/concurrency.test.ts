// Concurrent captures and refunds on one payment, from one engine and from two engines sharing
// one store (two processes): exactly one capture, refunds never above what was captured, and the
// processor asked at most once per decision (its idempotency key).
import { describe, expect, it } from "vitest";
import { manualClock } from "../../src/clock.js";
import { createEngine, type Engine } from "../../src/engine.js";
import { CardflowError, TransitionNotAllowed } from "../../src/errors.js";
import { sequentialIds } from "../../src/ids.js";
import { createMemoryStore } from "../../src/store/memory/index.js";
import { WrongExpectedRevision, type EventStore } from "../../src/store/port.js";
import { scriptedProcessors, TEST_CARD } from "../support/scripted-processor.js";

/** The memory store, counting the appends it refused for a stale expected revision. */
function countingStore() {
  const inner = createMemoryStore();
  const counts = { conflicts: 0 };
  const store: EventStore = {
    ...inner,
    async append(stream, events, options) {
      try {
        return await inner.append(stream, events, options);
      } catch (error) {
        if (error instanceof WrongExpectedRevision) counts.conflicts++;
        throw error;
      }
    },
  };
  return Object.assign(store, { counts });
}

async function setup(engines: number) {
  const store = countingStore();
  const scripted = scriptedProcessors();
  const clock = manualClock();
  // distinct id sequences, as separate processes would have
  const all: Engine[] = Array.from({ length: engines }, (_, i) => createEngine({ store, processors: scripted, clock, ids: sequentialIds(i * 1_000_000) }));
  const [first] = all as [Engine];
  await first.openAccount({ external_account_id: "acct" });
  const created = await first.createIntent({ external_account_id: "acct", amount: "100.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus" });
  scripted.nextAuthorization = { kind: "authorized", authorization: { amount_authorized: "100.00", tip_amount: "0.00", donation_amount: "0.00", authorization_code: "X", card: { ...TEST_CARD, type: "card_not_present" }, avs_response_code: null, avs_response_message: null } };
  await first.authorize({ external_account_id: "acct", payment_id: created.payment_id });
  return { store, scripted, engines: all, ref: { external_account_id: "acct", payment_id: created.payment_id } };
}

const settle = async (work: Promise<unknown>[]) => {
  const results = await Promise.allSettled(work);
  for (const r of results) if (r.status === "rejected") expect(r.reason).toBeInstanceOf(CardflowError);
  return results.filter((r) => r.status === "fulfilled").length;
};

const typesOf = async (store: EventStore, paymentId: string) =>
  (await store.readStream(`payment-${paymentId}`)).map((e) => e.type);

describe.each([1, 2])("concurrent commands on one payment, %i engine(s) on one store", (n) => {
  it("captures exactly once", async () => {
    const { store, scripted, engines, ref } = await setup(n);
    const captures = Array.from({ length: 24 }, (_, i) => engines[i % n]!.capture({ ...ref, amount: "100.00" }));
    expect(await settle(captures)).toBe(1);
    expect((await typesOf(store, ref.payment_id)).filter((t) => t === "PaymentCaptured")).toHaveLength(1);
    const keys = new Set(scripted.calls.filter((c) => c.startsWith("capture ")));
    expect(keys.size).toBe(1);
    // with two engines the store decides: an expected-revision conflict, or the other engine's capture attempt found in flight
    const record = await engines[0]!.getPayment(ref);
    expect([record.status, record.amount_captured]).toEqual(["succeeded", "100.00"]);
  });

  it("never refunds more than was captured", async () => {
    const { store, scripted, engines, ref } = await setup(n);
    await engines[0]!.capture({ ...ref, amount: "100.00" });
    const refunds = Array.from({ length: 30 }, (_, i) => engines[i % n]!.refund({ ...ref, amount: "10.00" }));
    expect(await settle(refunds)).toBe(10);
    const refunded = (await typesOf(store, ref.payment_id)).filter((t) => t === "PaymentRefunded");
    expect(refunded).toHaveLength(10);
    // one processor effect per recorded refund: losers of a race reused the winner's key
    expect(new Set(scripted.calls.filter((c) => c.startsWith("refund "))).size).toBe(10);
    for (const engine of engines) {
      const record = await engine.getPayment(ref);
      expect([record.amount_refunded, record.amount_refundable]).toEqual(["100.00", "0.00"]);
    }
  });
});

describe("an engine whose cached state is stale (another process moved the payment)", () => {
  it("re-checks a refusal on fresh state before answering", async () => {
    const { engines, ref } = await setup(2);
    const [first, second] = engines as [Engine, Engine];
    expect((await second.getPayment(ref)).status).toBe("requires_capture"); // second caches requires_capture
    await first.capture({ ...ref, amount: "100.00" });
    // on its cached state a refund is not allowed; on the store's state it is
    const refunded = await second.refund({ ...ref, amount: "1.00" });
    expect([refunded.status, refunded.amount_refunded]).toEqual(["succeeded", "1.00"]);
  });

  it("cannot act on stale state: the append's expected revision refuses it and the command re-decides", async () => {
    const { store, engines, ref } = await setup(2);
    const [first, second] = engines as [Engine, Engine];
    await second.getPayment(ref);
    await first.capture({ ...ref, amount: "100.00" });
    const error = (await second.capture({ ...ref, amount: "100.00" }).catch((e: unknown) => e)) as TransitionNotAllowed;
    expect(error).toBeInstanceOf(TransitionNotAllowed);
    expect(error.currentStatus).toBe("succeeded");
    expect(store.counts.conflicts).toBeGreaterThan(0);
    expect((await typesOf(store, ref.payment_id)).filter((t) => t === "PaymentCaptured")).toHaveLength(1);
  });
});
