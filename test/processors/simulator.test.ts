// The processor simulators called directly through the port, as the engine calls them: one effect
// per idempotency key (also across processes sharing a side), refusals kept, terminal collections
// ended only by what they belong to, settlements made once and at their time, cards on file per
// account. Expected values are written out from the port's contract and docs/test-cards.md.
import { describe, expect, it } from "vitest";
import { initialPaymentContext } from "../../machines/payment.js";
import { manualClock, type ManualClock } from "../../src/clock.js";
import { Conflict } from "../../src/errors.js";
import { sequentialIds, type Ids } from "../../src/ids.js";
import type { PaymentView, ProcessorEvent } from "../../src/processors/port.js";
import { memorySide } from "../../src/processors/processor-side.js";
import { createSimulators, type SimulatorOptions } from "../../src/processors/simulator.js";
import { amountFailingWith, cardFailingWith, testAmount, testCard } from "../../src/processors/test-cards.js";
import { StoreUnavailable } from "../../src/store/port.js";

const A = "acct_a";
const TERMINAL = { terminal_id: "tmr_1", external_account_id: A, terminal_type: "A_async" as const };

function payment(id: string, fields: Partial<PaymentView["intent"]> = {}, context: Partial<PaymentView> = {}): PaymentView {
  return {
    ...initialPaymentContext,
    processor: "A",
    ...context,
    intent: {
      payment_id: id,
      external_account_id: A,
      amount: "10.00",
      currency: "USD",
      payment_method_types: "card_present",
      capture_method: "automatic",
      processor: "A",
      external_transaction_id: null,
      external_customer_id: null,
      payment_method_id: null,
      stored_card: null,
      allow_saving_card: false,
      client_secret: null,
      date_created: "2026-01-01T00:00:00.000+00:00",
      ...fields,
    },
  };
}

/** Simulators (one "process") with the reports they make, on a side that others may share. */
function simulators(options: Partial<Omit<SimulatorOptions, "clock">> & { clock?: ManualClock } = {}, report: (e: ProcessorEvent) => Promise<void> = async () => undefined) {
  const clock = options.clock ?? manualClock();
  const sims = createSimulators({ ids: sequentialIds(), ...options, clock });
  const reports: Array<[string, ProcessorEvent]> = [];
  sims.connect(async (paymentId, event) => {
    reports.push([paymentId, event]);
    await report(event);
  });
  return { sims, port: sims.get("A"), reports, clock };
}

async function refusal(promise: Promise<unknown>) {
  return promise.then(
    () => expect.unreachable("expected a refusal"),
    (e: Error & { code?: string }) => e,
  );
}

describe("one effect per idempotency key", () => {
  it("a repeated key gets the recorded answer, also at once and from another process on the same side", async () => {
    const side = memorySide();
    const one = simulators({ side });
    const p = payment("pi_1");
    const [first, again] = await Promise.all([one.port.refund({ payment: p, amount: "1.00", key: "att_1" }), one.port.refund({ payment: p, amount: "1.00", key: "att_1" })]);
    expect(again).toEqual(first);
    expect(first.refund_id).toMatch(/^re_/);
    const other = simulators({ side, ids: { ...sequentialIds(), id: (prefix) => `${prefix}_other` } });
    expect(await other.port.refund({ payment: p, amount: "1.00", key: "att_1" })).toEqual(first);
    expect(await other.port.lookup("att_1")).toEqual({ call: "refund", refund_id: first.refund_id, amount: "1.00" });
  });

  it("a call that lands after another process made the call under its key gets that call's answer: one effect", async () => {
    const side = memorySide();
    const clock = manualClock();
    const slow = simulators({ side, clock, processorLatencyMs: 5_000 });
    const p = payment("pi_landing");
    const late = slow.port.refund({ payment: p, amount: "1.00", key: "att_landing" });
    // another process's retry under the same key, while the first call is on its way
    const other = simulators({ side, ids: { ...sequentialIds(), id: (prefix) => `${prefix}_other` } });
    const retried = await other.port.refund({ payment: p, amount: "1.00", key: "att_landing" });
    expect(retried.refund_id).toBe("re_other");
    await clock.advance(5_000);
    expect(await late).toEqual(retried);
    expect(await slow.port.lookup("att_landing")).toEqual({ call: "refund", refund_id: "re_other", amount: "1.00" });
  });

  it("a refusal is recorded and a repeated key is refused again, with the same code", async () => {
    const { port } = simulators();
    // 4000000000000077 expires 02/2030: too early for a card on file
    const p = payment("pi_1", {}, { card: { ...testCard("4000000000000077")!.card, type: "card_present" } });
    await port.readCardFromClient({ payment: p, card_number: "4000000000000077" });
    const first = await refusal(port.saveCard({ payment: p, external_customer_id: "cus_1", key: "att_save" }));
    expect(first.code).toBe("card_not_savable");
    expect(await port.lookup("att_save")).toEqual({ call: "refused", code: "card_not_savable", message: first.message });
    const again = await refusal(port.saveCard({ payment: p, external_customer_id: "cus_1", key: "att_save" }));
    expect([again.name, again.code, again.message]).toEqual(["ProcessorRefused", "card_not_savable", first.message]);
  });

  it("a call that fails without a refusal (its side's database busy) records nothing: its outcome stays unknown", async () => {
    const inner = memorySide();
    const side = { ...inner, change: () => { throw new Error("database is locked"); } } as typeof inner;
    const { port } = simulators({ side });
    await expect(port.startTerminalAuthorization({ payment: payment("pi_1"), terminal: TERMINAL, key: "att_1" })).rejects.toThrow("database is locked");
    expect(await port.lookup("att_1")).toBe("never_received");
  });

  it("a key reused for another kind of call is an error, not the other call's answer", async () => {
    const { port } = simulators();
    const p = payment("pi_1");
    await port.refund({ payment: p, amount: "1.00", key: "att_1" });
    await expect(port.void({ payment: p, key: "att_1" })).rejects.toThrow("idempotency key reused: recorded refund, asked void");
  });
});

describe("test cards and amounts", () => {
  it("an unknown card is refused naming its last 4 digits only", async () => {
    const { port } = simulators();
    const error = await refusal(port.readCardFromClient({ payment: payment("pi_1"), card_number: "4111111111111111" }));
    expect(error.code).toBe("invalid_test_card");
    expect(error.message).toBe("card 1111 is not a test card of the simulator");
  });

  it("a card that declines the first attempt declines the first attempt of each payment", async () => {
    const { port } = simulators();
    const charge = (id: string, key: string) => port.chargeStoredCard({ payment: payment(id, { payment_method_types: "card", payment_method_id: "pm_card_declined_once" }), key });
    expect((await charge("pi_1", "att_1")).kind).toBe("failed");
    expect((await charge("pi_1", "att_2")).kind).toBe("captured");
    expect((await charge("pi_2", "att_3")).kind).toBe("failed");
  });

  it("unscripted (SANDBOX=off): a declining card and a declining test amount are approved", async () => {
    const { port } = simulators({ scripted: false });
    const declined = await port.chargeStoredCard({ payment: payment("pi_1", { payment_method_types: "card", payment_method_id: "pm_card_declined" }), key: "att_1" });
    expect(declined.kind).toBe("captured");
    const amount = await port.chargeStoredCard({ payment: payment("pi_2", { amount: "99.05", payment_method_types: "card", payment_method_id: "pm_card_visa" }), key: "att_2" });
    expect(amount.kind).toBe("captured");
  });

  it("an authorization code is the processor's: six upper-case letters or digits", async () => {
    const ids: Ids = { ...sequentialIds(), id: (prefix) => `${prefix}_xk3fa9q2` };
    const { port } = simulators({ ids });
    const outcome = await port.chargeStoredCard({ payment: payment("pi_1", { payment_method_types: "card", payment_method_id: "pm_card_visa" }), key: "att_1" });
    expect(outcome.kind === "captured" && outcome.authorization).toMatchObject({ authorization_code: "3FA9Q2", card: { type: "card_not_present", last_4: "4242" } });
  });

  it("card numbers may be written with spaces; a currency without minor units known selects no test amount", () => {
    expect(testCard("4242 4242 4242 4242")?.number).toBe("4242424242424242");
    expect(testAmount("99.01", "ZZZ")).toBeUndefined();
  });

  it("the helpers for tests that walk every §7 code name the card and amount of docs/test-cards.md", () => {
    expect(cardFailingWith("USER_TIMEOUT").number).toBe("4000000000000184");
    expect(cardFailingWith("API_ERROR").number).toBe("4000000000000101");
    expect(amountFailingWith("API_ERROR")).toBe(9901);
    expect(amountFailingWith("WEB_TIMEOUT")).toBe(9910);
  });
});

describe("captures", () => {
  it("immediate by default, requested when configured: settled captureSettleMs later, once, with the amount", async () => {
    expect(await simulators().port.capture({ payment: payment("pi_1", { capture_method: "manual" }), amount: "10.00", key: "att_c" })).toEqual({ kind: "captured" });
    const { port, reports, clock } = simulators({ captures: "requested", captureSettleMs: 1_000 });
    expect(await port.capture({ payment: payment("pi_2", { capture_method: "manual" }), amount: "7.50", key: "att_c" })).toEqual({ kind: "capture_requested" });
    await clock.advance(999);
    expect(reports).toEqual([]);
    await clock.advance(1);
    expect(reports).toEqual([["pi_2", { kind: "capture_settled", amount: "7.50" }]]);
    await clock.advance(10_000);
    expect(reports).toHaveLength(1);
  });

  it("a process that starts makes a settlement another left, at its time; two processes make it once", async () => {
    const side = memorySide();
    // the process that requested the capture: its clock never moves (it is gone)
    const gone = simulators({ side, captures: "requested", captureSettleMs: 1_000 });
    await gone.port.capture({ payment: payment("pi_1", { capture_method: "manual" }), amount: "5.00", key: "att_c" });
    const clock = manualClock();
    const one = simulators({ side, clock });
    const two = simulators({ side, clock });
    await clock.advance(999);
    expect([...one.reports, ...two.reports]).toEqual([]);
    await clock.advance(1);
    expect([...one.reports, ...two.reports]).toEqual([["pi_1", { kind: "capture_settled", amount: "5.00" }]]);
  });

  it("a settlement cardflow refuses (not an outage) is not made again", async () => {
    let calls = 0;
    const side = memorySide();
    const { port, clock } = simulators({ side, captures: "requested", captureSettleMs: 1_000 }, async () => {
      calls++;
      throw new Conflict("the payment awaits no settlement", "payment_intent_unexpected_state");
    });
    await port.capture({ payment: payment("pi_1", { capture_method: "manual" }), amount: "5.00", key: "att_c" });
    await clock.advance(10_000);
    expect(calls).toBe(1);
    expect(side.entries("settlements")).toEqual([]);
  });

  it("a settlement the store could not take (an outage) is made again", async () => {
    let calls = 0;
    const { port, clock, reports } = simulators({ captures: "requested", captureSettleMs: 1_000 }, async () => {
      if (++calls === 1) throw new StoreUnavailable("outage");
    });
    await port.capture({ payment: payment("pi_1", { capture_method: "manual" }), amount: "5.00", key: "att_c" });
    await clock.advance(5_000);
    expect(reports.map(([id]) => id)).toEqual(["pi_1", "pi_1"]);
  });
});

describe("terminal collections", () => {
  it("recorded under the key they started with: null while collecting, then the outcome", async () => {
    const { sims, port, reports } = simulators();
    const p = payment("pi_1");
    await port.startTerminalAuthorization({ payment: p, terminal: TERMINAL, key: "att_t" });
    expect(await port.lookup("att_t")).toEqual({ call: "start_terminal", outcome: null, amount: "10.00" });
    expect(await sims.terminal.untilCollecting("tmr_1")).toBe("pi_1");
    await sims.terminal.presentCard("tmr_1", "5555555555554444");
    const recorded = await port.lookup("att_t");
    expect(recorded).toMatchObject({ call: "start_terminal", outcome: { kind: "authorized", authorization: { card: { brand: "mastercard", type: "card_present" } } } });
    expect(reports).toEqual([["pi_1", recorded !== "never_received" && recorded.call === "start_terminal" ? recorded.outcome : null]]);
    const error = await refusal(sims.terminal.presentCard("tmr_1"));
    expect(error.message).toBe('terminal tmr_1 is not collecting a payment');
    expect((await refusal(sims.terminal.clerkCancel("tmr_1"))).message).toBe('terminal tmr_1 is not collecting a payment');
  });

  it("the same payment may start its terminal again (a retry); another payment finds it busy", async () => {
    const { sims, port } = simulators();
    await port.startTerminalAuthorization({ payment: payment("pi_1"), terminal: TERMINAL, key: "att_1" });
    await port.startTerminalAuthorization({ payment: payment("pi_1"), terminal: TERMINAL, key: "att_2" });
    expect(sims.terminal.collecting("tmr_1")).toBe("pi_1");
    expect((await refusal(port.startTerminalAuthorization({ payment: payment("pi_2"), terminal: TERMINAL, key: "att_3" }))).code).toBe("terminal_busy");
  });

  it("canceling for another payment leaves the terminal's collection alone", async () => {
    const { sims, port } = simulators();
    await port.startTerminalAuthorization({ payment: payment("pi_1"), terminal: TERMINAL, key: "att_1" });
    await port.cancelTerminalAuthorization({ payment: payment("pi_2"), terminal_id: "tmr_1" });
    expect(sims.terminal.collecting("tmr_1")).toBe("pi_1");
    await port.cancelTerminalAuthorization({ payment: payment("pi_1"), terminal_id: "tmr_1" });
    expect(sims.terminal.collecting("tmr_1")).toBeUndefined();
    expect(await port.lookup("att_1")).toMatchObject({ outcome: { kind: "failed", last_error_code: "POS_CANCEL" } });
  });

  it("the shopper timeout of a collection that another process started again (a retry) leaves the new one alone", async () => {
    const side = memorySide();
    const clock = manualClock();
    const one = simulators({ side, clock, shopperTimeoutMs: 1_000 });
    const two = simulators({ side, clock, shopperTimeoutMs: 1_000 });
    await one.port.startTerminalAuthorization({ payment: payment("pi_1"), terminal: TERMINAL, key: "att_1" });
    await clock.advance(500);
    await two.port.startTerminalAuthorization({ payment: payment("pi_1"), terminal: TERMINAL, key: "att_2" });
    await clock.advance(500);
    expect(two.sims.terminal.collecting("tmr_1")).toBe("pi_1");
    expect(await two.port.lookup("att_2")).toEqual({ call: "start_terminal", outcome: null, amount: "10.00" });
    expect(one.reports).toEqual([]);
    await clock.advance(500);
    expect(await two.port.lookup("att_2")).toMatchObject({ outcome: { last_error_code: "USER_TIMEOUT" } });
  });

  it("a card presented while another process starts the collection again ends nothing: the new collection goes on", async () => {
    const inner = memorySide();
    let raced = false;
    // another process restarts the collection between this presentation's read and its end
    const side: typeof inner = {
      ...inner,
      change: (table, key, fn) => {
        if (table === "sessions" && raced) inner.set("sessions", key, { ...inner.get<object>("sessions", key), key: "att_2" });
        return inner.change(table, key, fn);
      },
    };
    const { sims, port, reports } = simulators({ side });
    await port.startTerminalAuthorization({ payment: payment("pi_1"), terminal: TERMINAL, key: "att_1" });
    raced = true;
    const error = await refusal(sims.terminal.presentCard("tmr_1"));
    expect(error.message).toBe('terminal tmr_1 is not collecting a payment');
    // the collection ended between the route's look and the presentation: the terminal is idle (409), not missing (404)
    expect(error).toMatchObject({ status: 409, code: "terminal_idle" });
    expect(sims.terminal.collecting("tmr_1")).toBe("pi_1");
    expect(await port.lookup("att_1")).toEqual({ call: "start_terminal", outcome: null, amount: "10.00" });
    expect(reports).toEqual([]);
  });

  it("the shopper timeout of a process whose collection another process ended reports nothing", async () => {
    const side = memorySide();
    const clock = manualClock();
    const one = simulators({ side, clock, shopperTimeoutMs: 1_000 });
    const two = simulators({ side, clock });
    await one.port.startTerminalAuthorization({ payment: payment("pi_1"), terminal: TERMINAL, key: "att_1" });
    await two.sims.terminal.presentCard("tmr_1");
    await clock.advance(2_000);
    expect(one.reports).toEqual([]);
    expect(two.reports.map(([, e]) => e.kind)).toEqual(["authorized"]);
  });
});

describe("client reader SDK (processor B) and cards on file", () => {
  it("a card read for a card-not-present intent is card_not_present; for card_present, card_present", async () => {
    const { port } = simulators();
    expect((await port.readCardFromClient({ payment: payment("pi_1", { payment_method_types: "card" }), card_number: "4242424242424242" })).type).toBe("card_not_present");
    expect((await port.readCardFromClient({ payment: payment("pi_2"), card_number: "4242424242424242" })).type).toBe("card_present");
  });

  it("cardFor gives the test card's details with the type asked for", () => {
    const { sims } = simulators();
    expect(sims.cardFor("5555 5555 5555 4444", "card_present")).toEqual({ ...testCard("5555555555554444")!.card, type: "card_present" });
  });

  it("saving needs a card on the payment that the processor read", async () => {
    const { port } = simulators();
    const card = { ...testCard("4242424242424242")!.card, type: "card_not_present" as const };
    expect((await refusal(port.saveCard({ payment: payment("pi_1"), external_customer_id: "cus_1", key: "att_1" }))).code).toBe("no_card");
    expect((await refusal(port.saveCard({ payment: payment("pi_2", {}, { card }), external_customer_id: "cus_1", key: "att_2" }))).code).toBe("no_card");
  });

  it("a saved card is charged and retrieved as the card saved, for its account and customer only", async () => {
    const { port } = simulators();
    const card = { ...testCard("5555555555554444")!.card, type: "card_not_present" as const };
    const p = payment("pi_1", { payment_method_types: "card" }, { card });
    await port.readCardFromClient({ payment: p, card_number: "5555555555554444" });
    const { payment_method_id } = await port.saveCard({ payment: p, external_customer_id: "cus_1", key: "att_save" });
    expect(await port.retrieveStoredCard({ external_account_id: A, external_customer_id: "cus_1", payment_method_id })).toEqual(card);
    expect(await port.retrieveStoredCard({ external_account_id: "acct_other", external_customer_id: "cus_1", payment_method_id })).toBeUndefined();
    expect(await port.retrieveStoredCard({ external_account_id: A, external_customer_id: "cus_2", payment_method_id })).toBeUndefined();
    // a sandbox test token is anyone's
    expect(await port.retrieveStoredCard({ external_account_id: A, external_customer_id: "cus_2", payment_method_id: "pm_card_visa" })).toMatchObject({ last_4: "4242" });
    const charged = await port.chargeStoredCard({ payment: payment("pi_2", { payment_method_types: "card", payment_method_id }), key: "att_charge" });
    expect(charged.kind === "captured" && charged.authorization.card).toEqual(card);
  });
});
