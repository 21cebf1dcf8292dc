// The Emmett peer of the benchmark (scripts/bench/peer/emmett-payment.ts) is a real payment: the
// events cardflow records for the same flow (valid by cardflow's own schemas, in the same order),
// the same money checks, and Emmett's expected versions on its PostgreSQL event store.
import { getInMemoryEventStore, IllegalStateError, isExpectedVersionConflictError, ValidationError, type EventStore } from "@event-driven-io/emmett";
import { getPostgreSQLEventStore } from "@event-driven-io/emmett-postgresql";
import { describe, expect, it } from "vitest";
import { EVENT_REGISTRY } from "../../machines/event-versions.js";
import { PaymentEvent, streams } from "../../machines/events.js";
import { openBenchAccount, storedCardFlow } from "../../scripts/bench/flows.js";
import { decide, emmettPayments, evolve, initialState, streamOf, type Payment } from "../../scripts/bench/peer/emmett-payment.js";
import { systemClock } from "../../src/clock.js";
import { createEngine } from "../../src/engine.js";
import { sequentialIds } from "../../src/ids.js";
import type { ProcessorPort } from "../../src/processors/port.js";
import { createSimulators } from "../../src/processors/simulator.js";
import { testDatabase } from "../support/postgres.js";

const CHARGE = { external_account_id: "acct_bench", currency: "USD", amount: "10.00", payment_method_id: "pm_card_visa", external_customer_id: "cus_bench" };

function peer(eventStore: EventStore = getInMemoryEventStore(), wrap: (p: ProcessorPort) => ProcessorPort = (p) => p) {
  const ids = sequentialIds();
  const processor = wrap(createSimulators({ clock: systemClock, ids }).get("B"));
  return { eventStore, payments: emmettPayments({ eventStore, processor, ids, clock: systemClock }) };
}

const typesIn = async (eventStore: EventStore, paymentId: string) => (await eventStore.readStream(streamOf(paymentId))).events.map((e) => e!.type);

describe("the Emmett peer's stored-card payment", () => {
  it("records the events cardflow records for the same flow, each valid by cardflow's schema, in the same order", async () => {
    const { eventStore, payments } = peer();
    const id = await payments.create(CHARGE);
    expect((await payments.authorize(id)).status).toBe("requires_capture");
    const captured = await payments.capture(id, "10.00");
    expect(captured).toMatchObject({ status: "succeeded", amount_authorized: "10.00", amount_captured: "10.00" });
    const stored = (await eventStore.readStream(streamOf(id))).events.map((e) => PaymentEvent.parse({ type: e!.type, version: EVENT_REGISTRY.get(e!.type)!.current, data: e!.data }));

    const engine = createEngine();
    const card = await openBenchAccount(engine);
    await storedCardFlow(engine, card);
    const all = await engine.store.readAll();
    const paymentId = (all.find((e) => e.type === "PaymentIntentCreated" && (e.data as { amount: string }).amount === "10.00")!.data as { payment_id: string }).payment_id;
    const cardflowTypes = (await engine.store.readStream(streams.payment(paymentId))).map((e) => e.type);
    await engine.close();

    expect(stored.map((e) => e.type)).toEqual(cardflowTypes);
    expect(cardflowTypes).toEqual(["PaymentIntentCreated", "AuthorizationAttempted", "PaymentAuthorized", "CaptureAttempted", "PaymentCaptured"]);
    // each outcome answers its attempt, as in cardflow
    const [, authAttempt, authorized, captureAttempt, capturedEvent] = stored as [unknown, { data: { attempt_id: string } }, { data: { attempt_id: string } }, { data: { attempt_id: string } }, { data: { attempt_id: string } }];
    expect(authorized.data.attempt_id).toBe(authAttempt.data.attempt_id);
    expect(capturedEvent.data.attempt_id).toBe(captureAttempt.data.attempt_id);
  });

  it("refuses a capture above what is authorized and not yet captured, and appends nothing", async () => {
    const { eventStore, payments } = peer();
    const id = await payments.create(CHARGE);
    await payments.authorize(id);
    await expect(payments.capture(id, "10.01")).rejects.toThrow(ValidationError);
    await expect(payments.capture(id, "0")).rejects.toThrow(/positive|greater/i);
    await expect(payments.capture(id, "1.001")).rejects.toThrow(/decimal|minor|places/i);
    expect(await typesIn(eventStore, id)).toEqual(["PaymentIntentCreated", "AuthorizationAttempted", "PaymentAuthorized"]);
    await payments.capture(id, "4.50");
    await expect(payments.capture(id, "4.50")).rejects.toThrow(IllegalStateError);
  });

  it("refuses to capture what was never authorized, and keeps a declined charge failed", async () => {
    const { eventStore, payments } = peer();
    const pending = await payments.create(CHARGE);
    await expect(payments.capture(pending, "10.00")).rejects.toThrow(IllegalStateError);
    const declined = await payments.create({ ...CHARGE, payment_method_id: "pm_card_declined" });
    expect((await payments.authorize(declined)).status).toBe("failed");
    expect(await typesIn(eventStore, declined)).toEqual(["PaymentIntentCreated", "AuthorizationAttempted", "AuthorizationFailed"]);
    await expect(payments.authorize(declined)).rejects.toThrow(IllegalStateError);
    await expect(payments.capture(declined, "10.00")).rejects.toThrow(IllegalStateError);
  });

  it("decides with decimal money: an authorization must cover the intent exactly", () => {
    const created = decide({ type: "CreatePaymentIntent", data: { ...intent(), amount: "10.1" } }, initialState());
    expect(created[0]!.data).toMatchObject({ amount: "10.10" });
    const state = created.reduce<Payment>(evolve, initialState());
    const authorization = { amount_authorized: "10.09", tip_amount: "0.00", donation_amount: "0.00", authorization_code: "A1", card: intent().stored_card!, avs_response_code: null, avs_response_message: null };
    expect(() => decide({ type: "RecordAuthorization", data: { attempt_id: "att_1", outcome: { kind: "authorized", authorization } } }, state)).toThrow(ValidationError);
    expect(() => decide({ type: "CreatePaymentIntent", data: intent() }, state)).toThrow(IllegalStateError);
    expect(() => decide({ type: "CreatePaymentIntent", data: { ...intent(), amount: "-1" } }, initialState())).toThrow();
  });

  it("appends with the version it read on Emmett's PostgreSQL event store: of two authorizations deciding on the same state, the second append is refused", async () => {
    const eventStore = getPostgreSQLEventStore(await testDatabase(), { schema: { autoMigration: "None" } });
    await eventStore.schema.migrate();
    try {
      // both commands have read the stream (version 1) before either calls the processor
      let arrived = 0;
      let release = () => {};
      const both = new Promise<void>((r) => (release = r));
      const { payments } = peer(eventStore, (p) => ({
        ...p,
        async chargeStoredCard(req) {
          if (++arrived === 2) release();
          await both;
          return p.chargeStoredCard(req);
        },
      }));
      const id = await payments.create(CHARGE);
      const results = await Promise.allSettled([payments.authorize(id), payments.authorize(id)]);
      const failures = results.filter((r): r is PromiseRejectedResult => r.status === "rejected").map((r) => r.reason as unknown);
      expect(failures).toHaveLength(1);
      expect(isExpectedVersionConflictError(failures[0])).toBe(true);
      expect(await typesIn(eventStore, id)).toEqual(["PaymentIntentCreated", "AuthorizationAttempted", "PaymentAuthorized"]);
    } finally {
      await eventStore.close();
    }
  });
});

function intent() {
  return {
    payment_id: "pi_1",
    external_account_id: "acct_bench",
    amount: "10.00",
    currency: "USD",
    payment_method_types: "card" as const,
    capture_method: "manual" as const,
    processor: "B" as const,
    external_transaction_id: null,
    external_customer_id: "cus_bench",
    payment_method_id: "pm_card_visa",
    stored_card: { type: "card_not_present" as const, brand: "visa", last_4: "4242", exp_month: "12", exp_year: 2034, cardholder_name: null, funding: "credit" as const },
    allow_saving_card: null,
    client_secret: null,
    client_secret_sha256: null,
    date_created: "2026-01-01T00:00:00.000Z",
  };
}
