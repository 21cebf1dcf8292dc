// Engine-side items of other issues: one clock reading per command (issue 16 item 10), a
// synchronous-terminal payment that saves its card on a manual capture (item 16), client secrets
// recorded as a digest and compared safely (issue 11).
import { describe, expect, test } from "vitest";
import { asOf } from "../../src/audit/as-of.js";
import { secretDigest } from "../../src/engine/client-secret.js";
import { A, B, refused, rig } from "./harness.js";

describe("one clock reading per command", () => {
  test("every event and field a command produces carries its instant; as-of at date_created finds the payment", async () => {
    // a clock that moves on every reading: two readings in one command would differ
    const r = await rig();
    const tick = r.clock.now.bind(r.clock);
    let n = 0;
    r.clock.now = () => tick() + n++;
    const created = await r.intent(A, { payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus_1" });
    const [event] = await r.engine.store.readStream(`payment-${created.payment_id}`);
    expect(event!.metadata.timestamp).toBe(created.date_created);
    expect((await asOf(r.engine.store, created.payment_id, created.date_created))?.record.payment_id).toBe(created.payment_id);
    // a processor call: its attempt at the reading taken when it is opened, its outcome at the one
    // taken when the processor answered (test/engine/answer-time.test.ts), never before it
    await r.engine.authorize({ external_account_id: A, payment_id: created.payment_id });
    const stamps = (await r.engine.store.readStream(`payment-${created.payment_id}`)).slice(1).map((e) => Date.parse(e.metadata.timestamp));
    expect(stamps).toHaveLength(2);
    expect(stamps[1]!).toBeGreaterThan(stamps[0]!);
  });
});

describe("synchronous terminal, manual capture, saving on", () => {
  test("the card is saved when the payment is captured: payment_method_id is in the capture answer", async () => {
    const r = await rig();
    const terminal_id = await r.terminal("A_sync");
    const created = await r.intent(A, { capture_method: "manual", external_customer_id: "cus_7", allow_saving_card: true });
    const auth = r.engine.authorize({ external_account_id: A, payment_id: created.payment_id, terminal_id });
    await r.sims.terminal.untilCollecting(terminal_id);
    await r.sims.terminal.presentCard(terminal_id, "4242424242424242");
    expect(await auth).toMatchObject({ status: "requires_capture", payment_method_id: null });
    const captured = await r.engine.capture({ external_account_id: A, payment_id: created.payment_id, amount: "10.00" });
    expect(captured.status).toBe("succeeded");
    expect(captured.payment_method_id).toMatch(/^pm_/);
    expect(await r.engine.listCustomerCards(A, "cus_7")).toEqual([expect.objectContaining({ payment_method_id: captured.payment_method_id })]);
  });
});

describe("client secrets", () => {
  test("the event keeps the secret's SHA-256; the create answer shows the secret once", async () => {
    const r = await rig();
    const created = await r.intent(B, { payment_method_types: "card", capture_method: "manual" });
    expect(created.client_secret).toMatch(new RegExp(`^${created.payment_id}_secret_`));
    const [event] = await r.engine.store.readStream(`payment-${created.payment_id}`);
    const data = event!.data as { client_secret: string | null; client_secret_sha256: string };
    expect(data.client_secret).toBeNull();
    expect(data.client_secret_sha256).toBe(secretDigest(created.client_secret!));
    expect(JSON.stringify(await r.engine.store.readAll())).not.toContain(created.client_secret!);
    expect((await r.engine.collectPaymentMethod({ client_secret: created.client_secret! })).status).toBe("requires_capture");
  });

  test("a wrong secret of the right length with a multibyte character is refused like any wrong secret, not a crash", async () => {
    const r = await rig();
    const created = await r.intent(B, { payment_method_types: "card", capture_method: "manual" });
    const secret = created.client_secret!;
    const multibyte = `${secret.slice(0, -1)}é`; // same length in characters, one more byte
    expect(multibyte.length).toBe(secret.length);
    for (const wrong of [multibyte, `${secret.slice(0, -1)}X`, `${created.payment_id}_secret_`]) {
      expect(await refused(r.engine.collectPaymentMethod({ client_secret: wrong }))).toMatchObject({ status: 401, code: "unauthorized", param: "client_secret" });
    }
  });
});
