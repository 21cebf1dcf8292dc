// Spec §4.8 "Asynchronous terminal, card present": auth returns payment_method_requested at once,
// the terminal collects later, the caller polls the status read (§3, §8).
import { describe, expect, test } from "vitest";
import { createMemoryStore } from "../../src/store/memory/index.js";
import { StoreUnavailable } from "../../src/store/port/unavailable.js";
import type { EventStore } from "../../src/store/port.js";
import { A, failureOf, refused, rig } from "./harness.js";

describe("asynchronous terminal (processor A), card present", () => {
  test("a terminal's report cardflow could not record (its store did not answer) is sent again by the simulated processor, as a processor re-sends an unacknowledged webhook", async () => {
    const inner = createMemoryStore();
    let down = false;
    const store: EventStore = { ...inner, append: (...args) => (down ? Promise.reject(new StoreUnavailable("the store did not answer in time")) : inner.append(...args)) };
    const { engine, sims, terminal, intent, get, clock } = await rig({ engine: { store } });
    const terminal_id = await terminal("A_async");
    const { payment_id } = await intent(A, { capture_method: "manual" });
    await engine.authorize({ external_account_id: A, payment_id, terminal_id });
    down = true;
    // the card is taken: the terminal is no longer collecting, and the helper answers the store's 503
    expect(await refused(sims.terminal.presentCard(terminal_id))).toBeInstanceOf(StoreUnavailable);
    expect(sims.terminal.collecting(terminal_id)).toBeUndefined();
    expect((await get(A, payment_id)).status).toBe("payment_method_requested");
    await clock.advance(3_000); // still down: sent again, refused again
    expect((await get(A, payment_id)).status).toBe("payment_method_requested");
    down = false;
    await clock.advance(1_000);
    await expect.poll(async () => (await get(A, payment_id)).status).toBe("requires_capture");
    expect((await engine.store.readStream(`payment-${payment_id}`)).filter((e) => e.type === "PaymentAuthorized")).toHaveLength(1);
  });

  test("manual capture: auth returns at once, polling sees payment_method_requested then requires_capture; capture succeeds", async () => {
    const { engine, sims, terminal, intent, poll } = await rig();
    const terminal_id = await terminal("A_async");
    const created = await intent(A, { capture_method: "manual" });
    expect(created.status).toBe("requires_payment_method");

    const auth = await engine.authorize({ external_account_id: A, payment_id: created.payment_id, terminal_id });
    expect(auth.status).toBe("payment_method_requested");
    expect(sims.terminal.collecting(terminal_id)).toBe(created.payment_id);

    const { seen, record } = await poll(A, created.payment_id, async () => {
      if (sims.terminal.collecting(terminal_id)) await sims.terminal.presentCard(terminal_id, "5555555555554444");
    });
    expect(seen).toEqual(["payment_method_requested", "requires_capture"]);
    expect(record).toMatchObject({ amount_authorized: "10.00", amount_captured: "0.00", amount_capturable: "10.00", card_present: true, processor: "A", terminal_id });
    expect(record.payment).toMatchObject({ type: "card_present", brand: "mastercard", last_4: "4444" });

    const captured = await engine.capture({ external_account_id: A, payment_id: created.payment_id, amount: "10.00" });
    expect(captured).toMatchObject({ status: "succeeded", amount_captured: "10.00", amount_refundable: "10.00", amount_capturable: "0.00" });
  });

  test("automatic capture: the payment passes requires_capture and moves on to succeeded", async () => {
    const { engine, sims, terminal, intent, poll, statusPath } = await rig();
    const terminal_id = await terminal("A_async");
    const { payment_id } = await intent(A, { capture_method: "automatic" });
    await engine.authorize({ external_account_id: A, payment_id, terminal_id });

    const { seen, record } = await poll(A, payment_id, () => sims.terminal.presentCard(terminal_id));
    expect(seen).toEqual(["payment_method_requested", "succeeded"]);
    expect(record).toMatchObject({ amount_captured: "10.00", amount_refundable: "10.00" });
    expect(await statusPath(payment_id)).toEqual(["requires_payment_method", "payment_method_requested", "requires_capture", "succeeded"]);
  });

  test("automatic capture with a processor that takes time to capture: polling sees requires_capture and keeps polling", async () => {
    const { engine, sims, terminal, intent, poll } = await rig({ simulators: { processorLatencyMs: 1_500 } });
    const terminal_id = await terminal("A_async");
    const { payment_id } = await intent(A, { capture_method: "automatic" });
    await engine.authorize({ external_account_id: A, payment_id, terminal_id });

    let presenting: Promise<void> | undefined;
    const { seen, record } = await poll(A, payment_id, async () => {
      presenting ??= sims.terminal.presentCard(terminal_id); // the engine's capture is then in flight
    });
    await presenting;
    expect(seen).toEqual(["payment_method_requested", "requires_capture", "succeeded"]);
    expect(record).toMatchObject({ amount_captured: "10.00" });
  });

  test("automatic capture: the terminal collects and captures in one step (§3 'collects and captures')", async () => {
    const { engine, sims, terminal, intent, statusPath, get } = await rig();
    const terminal_id = await terminal("A_async");
    const { payment_id } = await intent(A, { capture_method: "automatic" });
    await engine.authorize({ external_account_id: A, payment_id, terminal_id });
    await sims.terminal.presentCard(terminal_id, undefined, { capture: "on_terminal" });
    expect((await get(A, payment_id)).status).toBe("succeeded");
    expect(await statusPath(payment_id)).toEqual(["requires_payment_method", "payment_method_requested", "succeeded"]);
  });

  test("automatic capture requested: polling stops at capture_requested, which settles to succeeded after the configured delay", async () => {
    const { engine, sims, terminal, intent, poll, get, clock } = await rig({ simulators: { captureSettleMs: 5_000 } });
    const terminal_id = await terminal("A_async");
    const { payment_id } = await intent(A, { capture_method: "automatic" });
    await engine.authorize({ external_account_id: A, payment_id, terminal_id });

    const { seen } = await poll(A, payment_id, () => sims.terminal.presentCard(terminal_id, undefined, { capture: "requested" }));
    expect(seen).toEqual(["payment_method_requested", "capture_requested"]);
    await clock.advance(3_999); // the poll already advanced 1 s past the presentation
    expect((await get(A, payment_id)).status).toBe("capture_requested");
    await clock.advance(1);
    expect(await get(A, payment_id)).toMatchObject({ status: "succeeded", amount_captured: "10.00" });
  });

  test("a tip given on the terminal is authorized on top of the amount", async () => {
    const { engine, sims, terminal, intent, get } = await rig();
    const terminal_id = await terminal("A_async");
    const { payment_id } = await intent(A, { capture_method: "manual", amount: "20.10" });
    await engine.authorize({ external_account_id: A, payment_id, terminal_id });
    await sims.terminal.presentCard(terminal_id, undefined, { tip: "3.05" });
    expect(await get(A, payment_id)).toMatchObject({ status: "requires_capture", amount: "20.10", amount_authorized: "23.15", tip_amount: "3.05" });
  });

  test("a tip that is not an amount, or takes the total past the bound, is refused naming tip; the terminal keeps collecting (README: Money)", async () => {
    const { engine, sims, terminal, intent, get } = await rig();
    const terminal_id = await terminal("A_async");
    const { payment_id } = await intent(A, { capture_method: "manual", amount: "9999999999.99" });
    await engine.authorize({ external_account_id: A, payment_id, terminal_id });
    for (const [tip, message] of [["5.00", /at most 9999999999.99 USD/], ["abc", /^tip: "abc" is not a decimal number/], ["0.001", /^tip: has more than 2 decimal places/]] as const) {
      const error = await refused(sims.terminal.presentCard(terminal_id, undefined, { tip }));
      expect(error).toMatchObject({ code: "amount_invalid", param: "tip" });
      expect(error.message).toMatch(message);
    }
    expect(sims.terminal.collecting(terminal_id)).toBe(payment_id);
    await sims.terminal.presentCard(terminal_id);
    expect(await get(A, payment_id)).toMatchObject({ status: "requires_capture", amount_authorized: "9999999999.99" });
  });

  test("the shopper never presents a card: the terminal times out, requires_payment_method with USER_TIMEOUT", async () => {
    const { engine, sims, terminal, intent, poll } = await rig({ simulators: { shopperTimeoutMs: 60_000 } });
    const terminal_id = await terminal("A_async");
    const { payment_id } = await intent(A, { capture_method: "manual" });
    await engine.authorize({ external_account_id: A, payment_id, terminal_id });
    const { seen, record } = await poll(A, payment_id);
    expect(seen).toEqual(["payment_method_requested", "requires_payment_method"]);
    expect(failureOf(record)).toEqual({ status: "requires_payment_method", last_error: "Timed out waiting for shopper", last_error_code: "USER_TIMEOUT" });
    expect(sims.terminal.collecting(terminal_id)).toBeUndefined();
  });

  test("a short SYNC_AUTH_TIMEOUT_MS (the blocking auth's) does not end an asynchronous collection: the reconciler leaves it for the 3 minutes spec §8 polls", async () => {
    const { engine, sims, terminal, intent, get, clock } = await rig({ engine: { syncAuthTimeoutMs: 15_000, reconcileGraceMs: 30_000 } });
    const terminal_id = await terminal("A_async");
    const { payment_id } = await intent(A, { capture_method: "manual" });
    await engine.authorize({ external_account_id: A, payment_id, terminal_id });
    await clock.advance(48_000);
    expect((await engine.reconcile()).resolved).toEqual([]);
    await sims.terminal.presentCard(terminal_id);
    expect((await get(A, payment_id)).status).toBe("requires_capture");
  });

  test("an asynchronous terminal that never says how its collection ended: the reconciler ends it after 3 minutes (USER_TIMEOUT), not before", async () => {
    const { engine, sims, terminal, intent, get, clock } = await rig({ simulators: { shopperTimeoutMs: 3_600_000 }, engine: { syncAuthTimeoutMs: 15_000, reconcileGraceMs: 30_000 } });
    const terminal_id = await terminal("A_async");
    const { payment_id } = await intent(A, { capture_method: "manual" });
    await engine.authorize({ external_account_id: A, payment_id, terminal_id });
    await clock.advance(179_000);
    expect((await engine.reconcile()).resolved).toEqual([]);
    await clock.advance(1_000);
    expect((await engine.reconcile()).resolved).toEqual([expect.objectContaining({ payment_id, open: "TerminalWait", processor: "still_collecting" })]);
    expect(failureOf(await get(A, payment_id))).toEqual({ status: "requires_payment_method", last_error: "Timed out waiting for shopper", last_error_code: "USER_TIMEOUT" });
    expect(sims.terminal.collecting(terminal_id)).toBeUndefined();
  });

  test("the clerk cancels on the terminal: requires_payment_method with POS_CANCEL", async () => {
    const { engine, sims, terminal, intent, get } = await rig();
    const terminal_id = await terminal("A_async");
    const { payment_id } = await intent(A, { capture_method: "manual" });
    await engine.authorize({ external_account_id: A, payment_id, terminal_id });
    await sims.terminal.clerkCancel(terminal_id);
    expect(failureOf(await get(A, payment_id))).toEqual({ status: "requires_payment_method", last_error: "Canceled by clerk", last_error_code: "POS_CANCEL" });
    expect((await refused(sims.terminal.clerkCancel(terminal_id))).code).toBe("terminal_idle");
  });

  test("terminal busy: a second payment's auth on a collecting terminal is refused; cancel frees the terminal", async () => {
    const { engine, sims, terminal, intent, get } = await rig();
    const terminal_id = await terminal("A_async");
    const first = await intent(A, { capture_method: "manual" });
    const second = await intent(A, { capture_method: "manual" });
    await engine.authorize({ external_account_id: A, payment_id: first.payment_id, terminal_id });

    const busy = await refused(engine.authorize({ external_account_id: A, payment_id: second.payment_id, terminal_id }));
    expect(busy).toMatchObject({ status: 409, code: "terminal_busy" });
    expect(busy.message).toContain(`terminal ${terminal_id} is busy`);
    expect((await get(A, second.payment_id)).status).toBe("requires_payment_method");
    expect(sims.terminal.collecting(terminal_id)).toBe(first.payment_id);

    expect((await engine.cancel({ external_account_id: A, payment_id: first.payment_id })).status).toBe("canceled");
    expect(sims.terminal.collecting(terminal_id)).toBeUndefined();
    expect((await engine.authorize({ external_account_id: A, payment_id: second.payment_id, terminal_id })).status).toBe("payment_method_requested");
    await sims.terminal.presentCard(terminal_id);
    expect((await get(A, second.payment_id)).status).toBe("requires_capture");
  });

  test("a second auth of the payment being collected is refused and leaves the collection running", async () => {
    const { engine, sims, terminal, intent, get } = await rig();
    const terminal_id = await terminal("A_async");
    const other_terminal = await terminal("A_async");
    const { payment_id } = await intent(A, { capture_method: "manual" });
    await engine.authorize({ external_account_id: A, payment_id, terminal_id });

    for (const t of [terminal_id, other_terminal]) {
      const error = await refused(engine.authorize({ external_account_id: A, payment_id, terminal_id: t }));
      expect(error).toMatchObject({ status: 409, code: "payment_intent_unexpected_state" });
    }
    expect(sims.terminal.collecting(terminal_id)).toBe(payment_id);
    expect(sims.terminal.collecting(other_terminal)).toBeUndefined();
    await sims.terminal.presentCard(terminal_id);
    expect((await get(A, payment_id)).status).toBe("requires_capture");
  });

  test("the asynchronous terminal type does not support card on file: saving is refused clearly", async () => {
    const { engine, sims, terminal, intent } = await rig();
    const terminal_id = await terminal("A_async");
    const { payment_id } = await intent(A, { capture_method: "automatic", external_customer_id: "cus_1", allow_saving_card: true });
    await engine.authorize({ external_account_id: A, payment_id, terminal_id });
    await sims.terminal.presentCard(terminal_id);
    const error = await refused(engine.saveCard({ external_account_id: A, payment_id, external_customer_id: "cus_1" }));
    expect(error).toMatchObject({ status: 409 });
    expect(error.message).toContain("the asynchronous terminal type does not support card on file");
    expect(await engine.listCustomerCards(A, "cus_1")).toEqual([]);
  });

  test("presenting a card on an idle terminal is refused by the helper", async () => {
    const { sims, terminal } = await rig();
    const terminal_id = await terminal("A_async");
    expect((await refused(sims.terminal.presentCard(terminal_id))).code).toBe("terminal_idle");
  });
});
