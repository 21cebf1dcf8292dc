// The read models as pure folds (projections/*.ts), fed stored events directly: the webhook
// delivery attempts of a payment (README: webhooks), while its timeline is its stream (the audit's
// fold, README: audit timeline); the payments document and the record presented from it, the
// record's processor; terminals keyed per account. The runner and stores around them are tested in test/engine and test/store.
import { describe, expect, test } from "vitest";
import type { Card } from "../../machines/events.js";
import { applyPaymentEvent, initialPaymentSnapshot, stateOf } from "../../machines/fold.js";
import { customerCardsProjection } from "../../projections/customer-cards.js";
import { paymentDeliveriesProjection } from "../../projections/payment-deliveries.js";
import { paymentsProjection, type PaymentDoc } from "../../projections/payments.js";
import { paymentRecord, recordOf } from "../../src/present/payment-record.js";
import { terminalsProjection } from "../../projections/terminals.js";
import { audit } from "../../src/audit/audit.js";
import { createMemoryStore } from "../../src/store/memory/index.js";
import type { RecordedEvent } from "../../src/store/port.js";
import { TEST_CARD } from "../support/scripted-processor.js";

let position = 0;
/** actor "absent": metadata without an actor (events written before actors were recorded). */
const stored = (stream: string, type: string, data: unknown, actor: string | null = "key_1"): RecordedEvent => ({
  id: `ev_${++position}`,
  type,
  version: 1,
  data,
  stream,
  revision: position - 1,
  position,
  metadata: { timestamp: `2026-01-01T00:00:0${position % 10}.000+00:00`, request_id: 100 + position, ...(actor === "absent" ? {} : { actor }) },
});

const intent = (payment_method_types: "card" | "card_present", processor: "A" | "B") => ({
  payment_id: "pay_1", external_account_id: "acct_1", amount: "10.00", currency: "USD", payment_method_types, capture_method: "manual", processor,
  external_transaction_id: null, external_customer_id: null, payment_method_id: null, stored_card: null, allow_saving_card: false, client_secret: null,
  date_created: "2026-01-01T00:00:00.000+00:00",
});
const authorization = { amount_authorized: "10.00", tip_amount: "0.00", donation_amount: "0.00", authorization_code: "A1", card: TEST_CARD as Card, avs_response_code: null, avs_response_message: null };

describe("a payment's timeline is its stream (the audit folds it; no read model copies it)", () => {
  test("given a payment's events, then each becomes a row with its time, request, actor, status before and after and the amounts after", async () => {
    position = 0;
    const events = [
      stored("payment-pay_1", "PaymentIntentCreated", intent("card", "B"), "key_1"),
      stored("payment-pay_1", "PaymentMethodCollected", { card: TEST_CARD, terminal_id: null }, null),
      stored("payment-pay_1", "PaymentAuthorized", authorization, "absent"),
    ];
    const store = createMemoryStore();
    await store.append("payment-pay_1", events.map(({ id, type, version, data, metadata }) => ({ id, type, version, data, metadata })), { expectedRevision: "no_stream" });
    const { timeline } = await audit({ store }, "pay_1");
    // events recorded before machine versions: no machine_version, nothing allowed by an earlier machine
    const row = { terminal_id: null, idempotency_key: null, allowed: true, machine_version: null, allowed_by_machine: null, detail: null };
    expect(timeline).toEqual([
      { ...row, position: 1, revision: 0, event_id: "ev_1", type: "PaymentIntentCreated", timestamp: "2026-01-01T00:00:01.000+00:00", request_id: 101, actor: "key_1", status_before: "none", status_after: "requires_payment_method", amounts_after: { authorized: "0.00", captured: "0.00", refunded: "0.00" } },
      { ...row, position: 2, revision: 1, event_id: "ev_2", type: "PaymentMethodCollected", timestamp: "2026-01-01T00:00:02.000+00:00", request_id: 102, actor: null, status_before: "requires_payment_method", status_after: "payment_method_requested", amounts_after: { authorized: "0.00", captured: "0.00", refunded: "0.00" } },
      { ...row, position: 3, revision: 2, event_id: "ev_3", type: "PaymentAuthorized", timestamp: "2026-01-01T00:00:03.000+00:00", request_id: 103, actor: null, status_before: "payment_method_requested", status_after: "requires_capture", amounts_after: { authorized: "10.00", captured: "0.00", refunded: "0.00" } },
    ]);
    expect([paymentDeliveriesProjection, terminalsProjection, customerCardsProjection].map((p) => events.map((e) => p.keyOf(e)))).toEqual([
      [null, null, null],
      [null, null, null],
      [null, null, null],
    ]);
  });
});

describe("the payment deliveries read model", () => {
  test("given webhook delivery attempts for a payment, then they gather in its document; other endpoint events and deliveries of no payment are ignored", () => {
    position = 0;
    const attempt = (payment_id: string | null, n: number) =>
      stored("webhook_deliveries-we_1", "WebhookDeliveryAttempted", {
        endpoint_id: "we_1", event_id: `evt_${n}`, event_type: "payment.succeeded", payment_id, sequence: n, attempt: 1, delivered: n === 2, status_code: n === 2 ? 200 : 500, error: null, duration_ms: 12, next_attempt_at: null,
      });
    const first = attempt("pay_1", 1);
    const second = attempt("pay_1", 2);
    expect(paymentDeliveriesProjection.keyOf(first)).toBe("pay_1");
    expect(paymentDeliveriesProjection.keyOf(attempt(null, 3))).toBeNull();
    expect(paymentDeliveriesProjection.keyOf(stored("webhook_endpoint-we_1", "WebhookEndpointFailing", { endpoint_id: "we_1", payment_id: "pay_1" }))).toBeNull();
    expect(paymentDeliveriesProjection.keyOf(stored("payment-pay_1", "PaymentIntentCreated", intent("card", "A")))).toBeNull();
    const doc = paymentDeliveriesProjection.apply(paymentDeliveriesProjection.apply(undefined, first), second);
    expect(doc).toEqual({
      payment_id: "pay_1",
      deliveries: [
        { endpoint_id: "we_1", event_id: "evt_1", event_type: "payment.succeeded", sequence: 1, attempt: 1, delivered: false, status_code: 500, error: null, duration_ms: 12, next_attempt_at: null, position: 1, timestamp: "2026-01-01T00:00:01.000+00:00" },
        { endpoint_id: "we_1", event_id: "evt_2", event_type: "payment.succeeded", sequence: 2, attempt: 1, delivered: true, status_code: 200, error: null, duration_ms: 12, next_attempt_at: null, position: 2, timestamp: "2026-01-01T00:00:02.000+00:00" },
      ],
    });
  });
});

describe("the payment record (spec §2.1: processor names the processor that handled the payment)", () => {
  test("given a card-present intent of a processor A account collected on a processor B reader, then the record names processor B", () => {
    const created = applyPaymentEvent(initialPaymentSnapshot, { type: "PaymentIntentCreated", version: 1, data: intent("card_present", "A") } as never)!;
    expect(paymentRecord(stateOf(created), 1).processor).toBe("A");
    const collected = applyPaymentEvent(created, { type: "PaymentMethodCollected", version: 1, data: { card: TEST_CARD, terminal_id: "tml_reader" } } as never)!;
    expect(paymentRecord(stateOf(collected), 2)).toMatchObject({ processor: "B", terminal_id: "tml_reader", request_id: 2 });
  });

  test("given a state before the intent was created, then there is no record", () => {
    expect(() => paymentRecord(stateOf(initialPaymentSnapshot), 1)).toThrow("no payment record before PaymentIntentCreated");
  });
});

describe("the terminals read model (spec §2.2)", () => {
  test("given a terminal registered, then it is keyed by account and terminal id; other events are ignored", () => {
    position = 0;
    const registered = stored("account-acct_1", "TerminalRegistered", { terminal_id: "tml_1", external_account_id: "acct_1", terminal_type: "A_sync", label: null, serial_number: null, registered_at: "2026-01-01T00:00:00.000+00:00" });
    expect(terminalsProjection.keyOf(registered)).toBe("acct_1/tml_1");
    expect(terminalsProjection.keyOf(stored("payment-pay_1", "PaymentIntentCreated", intent("card", "A")))).toBeNull();
    expect(terminalsProjection.apply(undefined, registered)).toEqual({ terminal_id: "tml_1", external_account_id: "acct_1", terminal_type: "A_sync", label: null, serial_number: null, date_created: "2026-01-01T00:00:00.000+00:00" });
  });
});

describe("the payments read model", () => {
  test("given a payment's events, then its document is the machine's state and the last request id, and its record is presented from them", () => {
    position = 0;
    const events = [
      stored("payment-pay_1", "PaymentIntentCreated", intent("card", "B")),
      stored("payment-pay_1", "PaymentMethodCollected", { card: TEST_CARD, terminal_id: null }),
      stored("payment-pay_1", "PaymentAuthorized", authorization),
    ];
    const fold = (from: PaymentDoc | undefined, es: readonly RecordedEvent[]) => es.reduce<PaymentDoc | undefined>((doc, e) => paymentsProjection.apply(doc, e), from)!;
    const doc = fold(undefined, events);
    const snapshot = events.reduce((s, e) => applyPaymentEvent(s, e as never)!, initialPaymentSnapshot);
    expect(doc).toEqual({ state: stateOf(snapshot), request_id: 103 });
    expect(recordOf(doc)).toEqual(paymentRecord(stateOf(snapshot), 103));
    expect(recordOf(doc)).toMatchObject({ payment_id: "pay_1", status: "requires_capture", amount_authorized: "10.00", request_id: 103 });
    // folded on from a document read back from a store (JSON), the same document
    expect(fold(JSON.parse(JSON.stringify(fold(undefined, events.slice(0, 2)))) as PaymentDoc, events.slice(2))).toEqual(doc);
  });
});
