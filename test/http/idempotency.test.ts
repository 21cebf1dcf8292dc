// Idempotency-Key: one effect per key; the first answer on retries; 422 for another request with
// the key; 409 while the first is in flight; concurrent capture retries never capture twice.
import { afterEach, describe, expect, it } from "vitest";
import type { IdempotencyRecord } from "../../src/store/port.js";
import { expectProblem, startApi, type Api, type Merchant } from "./harness.js";

let api: Api;
afterEach(async () => {
  await api.close();
});

const stored = { payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "c" };
const count = async (type: string) => (await api.store.readAll()).filter((e) => e.type === type).length;

async function authorized(m: Merchant, amount = "10.00"): Promise<string> {
  const { body } = await m.post("/v1/payment/intent", { ...stored, amount });
  expect((await m.post("/v1/payment/auth", { payment_id: body.payment_id })).body.status).toBe("requires_capture");
  return body.payment_id;
}

describe("Idempotency-Key", () => {
  it("a retry with the same key and body gets the first answer, without a second effect", async () => {
    api = await startApi();
    const m = await api.merchant("acct_i");
    const first = await m.post("/v2/payment/intent", { ...stored, amount: "3.00" }, { "idempotency-key": "create-1" });
    expect(first.status).toBe(200);
    expect(first.headers.get("idempotent-replayed")).toBe("false");
    // same JSON, other key order and spacing
    const again = await api.request("POST", "/v2/payment/intent", {
      key: m.key,
      raw: `{ "amount":"3.00", ${JSON.stringify(stored).slice(1, -1)}, "external_account_id":"acct_i" }`,
      headers: { "idempotency-key": "create-1" },
    });
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
    expect(await count("PaymentIntentCreated")).toBe(1);

    const paymentId = await authorized(m);
    const capture = await m.post("/v1/payment/capture", { payment_id: paymentId, amount: "10.00" }, { "idempotency-key": "cap-1" });
    const retry = await m.post("/v1/payment/capture", { payment_id: paymentId, amount: "10.00" }, { "idempotency-key": "cap-1" });
    expect(retry.status).toBe(200);
    expect(retry.body).toEqual(capture.body);
    expect(retry.body.status).toBe("success");
    expect(await count("PaymentCaptured")).toBe(1);
  });

  it("the same key with another body, or on another endpoint, is 422", async () => {
    api = await startApi();
    const m = await api.merchant("acct_i");
    await m.post("/v2/payment/intent", { ...stored, amount: "3.00" }, { "idempotency-key": "k" });
    expectProblem(await m.post("/v2/payment/intent", { ...stored, amount: "4.00" }, { "idempotency-key": "k" }), 422, "idempotency_key_reused", "Idempotency-Key");
    expectProblem(await m.post("/v1/payment/intent", { ...stored, amount: "3.00" }, { "idempotency-key": "k" }), 422, "idempotency_key_reused");
    expect(await count("PaymentIntentCreated")).toBe(1);
  });

  it("an optional field sent as null is not sent for the key's request either: the retry replays", async () => {
    api = await startApi();
    const m = await api.merchant("acct_n");
    const first = await m.post("/v2/payment/intent", { ...stored, amount: "3.00" }, { "idempotency-key": "k-null" });
    const retry = await m.post("/v2/payment/intent", { ...stored, amount: "3.00", external_payment_id: null }, { "idempotency-key": "k-null" });
    expect([retry.status, retry.headers.get("idempotent-replayed"), retry.body]).toEqual([200, "true", first.body]);
    // a value where the first request had none is another request
    expectProblem(await m.post("/v2/payment/intent", { ...stored, amount: "3.00", external_payment_id: "ref-1" }, { "idempotency-key": "k-null" }), 422, "idempotency_key_reused");
    expect(await count("PaymentIntentCreated")).toBe(1);
  });

  it("keys belong to one account: another account may use the same key", async () => {
    api = await startApi();
    const a = await api.merchant("acct_a");
    const b = await api.merchant("acct_b");
    const ra = await a.post("/v2/payment/intent", { ...stored, amount: "3.00" }, { "idempotency-key": "shared" });
    const rb = await b.post("/v2/payment/intent", { ...stored, amount: "3.00" }, { "idempotency-key": "shared" });
    expect(rb.headers.get("idempotent-replayed")).toBe("false");
    expect(rb.body.payment_id).not.toBe(ra.body.payment_id);
  });

  it("a client secret's keys are not the account's: the merchant's request under the key of the SDK's call on the same payment acts", async () => {
    api = await startApi();
    const m = await api.merchant("acct_sdk_keys", "B");
    const sdk = (path: string, body: object, key: string) => api.request("POST", path, { body, headers: { "idempotency-key": key } });
    for (const step of ["capture", "cancel"] as const) {
      const { body: intent } = await m.post("/v2/payment/intent", { amount: "6.00", payment_method_types: "card", capture_method: "manual", allow_saving_card: true });
      expect((await sdk("/v2/sdk/payment-method", { client_secret: intent.client_secret }, `k-${step}`)).body.status).toBe("requires_capture");
      const body = step === "capture" ? { payment_id: intent.payment_id, amount: "6.00" } : { payment_id: intent.payment_id };
      const answer = await m.post(`/v2/payment/${step}`, body, { "idempotency-key": `k-${step}` });
      expect([answer.headers.get("idempotent-replayed"), answer.body.status]).toEqual(["false", step === "capture" ? "succeeded" : "canceled"]);
    }
  });

  it("refused requests are not remembered: the same key works once the request is valid", async () => {
    api = await startApi();
    const m = await api.merchant("acct_i");
    const { body } = await m.post("/v1/payment/intent", { ...stored, amount: "10.00" });
    expectProblem(await m.post("/v1/payment/capture", { payment_id: body.payment_id, amount: "10.00" }, { "idempotency-key": "early" }), 409, "payment_intent_unexpected_state");
    await m.post("/v1/payment/auth", { payment_id: body.payment_id });
    expect((await m.post("/v1/payment/capture", { payment_id: body.payment_id, amount: "10.00" }, { "idempotency-key": "early" })).body.status).toBe("success");
  });

  it("a terminal authorization the processor refused (busy) is not remembered, its reference included: the retry with its key starts the terminal once it is free", async () => {
    api = await startApi();
    const m = await api.merchant("acct_busy");
    const terminal = await m.terminal("A_async");
    const intent = { amount: "5.00", payment_method_types: "card_present", capture_method: "manual" };
    const [first, second] = [(await m.post("/v2/payment/intent", intent)).body, (await m.post("/v2/payment/intent", intent)).body];
    await m.post("/v2/payment/auth", { payment_id: first.payment_id, terminal_id: terminal });
    const auth = () => m.post("/v2/payment/auth", { payment_id: second.payment_id, terminal_id: terminal, external_payment_id: "pos-try-1" }, { "idempotency-key": "busy-1" });
    expectProblem(await auth(), 409, "terminal_busy", "terminal_id");
    expectProblem(await auth(), 409, "terminal_busy", "terminal_id"); // still busy: refused again, not a replay
    await m.post("/v2/payment/cancel", { payment_id: first.payment_id });
    const retried = await auth();
    expect(retried.headers.get("idempotent-replayed")).toBe("false");
    expect(retried.body).toMatchObject({ status: "payment_method_requested", terminal_id: terminal, external_transaction_id: "pos-try-1" });
  });

  it("the record is written in the same append as the command's events, with the answer", async () => {
    api = await startApi();
    const m = await api.merchant("acct_i");
    const append = api.store.append.bind(api.store);
    const carried: Array<{ stream: string; types: string[]; record: IdempotencyRecord | undefined }> = [];
    api.store.append = async (stream, events, options) => {
      carried.push({ stream, types: events.map((e) => e.type), record: options.idempotency });
      return append(stream, events, options);
    };
    const res = await m.post("/v2/payment/intent", { ...stored, amount: "3.00" }, { "idempotency-key": "tx" });
    const created = carried.find((c) => c.types.includes("PaymentIntentCreated"))!;
    // the answer is carried sealed (no secret in plaintext: see below), and replays as it was
    const sealed = { sealed: expect.stringMatching(/^[\w-]{40,}$/) };
    expect(created.record).toMatchObject({ key: "acct_i:tx", status: 200, body: sealed });
    expect(await api.store.readIdempotency("acct_i:tx")).toMatchObject({ body: sealed, expires_at: "2026-01-02T00:00:00.000+00:00" });
    expect((await m.post("/v2/payment/intent", { ...stored, amount: "3.00" }, { "idempotency-key": "tx" })).body).toEqual(res.body);
    const terminal = await m.post("/v2/hardware", { terminal_type: "A_async" }, { "idempotency-key": "hw" });
    expect(terminal.status).toBe(200);
    expect(carried.find((c) => c.types.includes("TerminalRegistered"))!.record).toMatchObject({ key: "acct_i:hw", body: sealed });
  });

  it("kept for the configured time, then the key may be used again", async () => {
    api = await startApi({ idempotencyTtlMs: 60_000 });
    const m = await api.merchant("acct_i");
    const first = await m.post("/v2/payment/intent", { ...stored, amount: "3.00" }, { "idempotency-key": "ttl" });
    await api.clock.advance(59_000);
    expect((await m.post("/v2/payment/intent", { ...stored, amount: "3.00" }, { "idempotency-key": "ttl" })).body).toEqual(first.body);
    await api.clock.advance(2_000);
    const later = await m.post("/v2/payment/intent", { ...stored, amount: "3.00" }, { "idempotency-key": "ttl" });
    expect(later.headers.get("idempotent-replayed")).toBe("false");
    expect(later.body.payment_id).not.toBe(first.body.payment_id);
  });

  it("a key used again once free is a new request on the payment too: a capture under the key its authorization used, once the key's keeping time is over, captures", async () => {
    api = await startApi({ idempotencyTtlMs: 60_000 });
    const m = await api.merchant("acct_i");
    const { body: intent } = await m.post("/v2/payment/intent", { ...stored, amount: "3.00" }, { "idempotency-key": "order-1" });
    expect((await m.post("/v2/payment/auth", { payment_id: intent.payment_id }, { "idempotency-key": "order-1-pay" })).body.status).toBe("requires_capture");
    await api.clock.advance(61_000);
    const captured = await m.post("/v2/payment/capture", { payment_id: intent.payment_id, amount: "3.00" }, { "idempotency-key": "order-1-pay" });
    expect([captured.headers.get("idempotent-replayed"), captured.body.status, captured.body.amount_captured]).toEqual(["false", "succeeded", "3.00"]);
  });

  it("the same key while the first request is in flight is 409", async () => {
    api = await startApi();
    const m = await api.merchant("acct_i");
    const terminal = await m.terminal("A_sync");
    const { body } = await m.post("/v1/payment/intent", { amount: "5.00", payment_method_types: "card_present", capture_method: "manual" });
    const blocking = m.post("/v1/payment/auth", { payment_id: body.payment_id, terminal_id: terminal }, { "idempotency-key": "auth-1" });
    await api.simulators.terminal.untilCollecting(terminal);
    const busy = await m.post("/v1/payment/auth", { payment_id: body.payment_id, terminal_id: terminal }, { "idempotency-key": "auth-1" });
    expectProblem(busy, 409, "idempotency_key_in_use", "Idempotency-Key");
    expect(busy.headers.get("retry-after")).toBe("1");
    // the same request under a key claimed by a process SIGKILLed then: retried after half the
    // claim's age, told when the claim ends; the claim running here is still retried every second
    const held = (await api.store.readIdempotency("acct_i:auth-1"))!;
    await api.store.claimIdempotency({ ...held, key: "acct_i:auth-dead", token: "killed" }, held.expires_at);
    await api.clock.advance(60_000);
    const dead = await m.post("/v1/payment/auth", { payment_id: body.payment_id, terminal_id: terminal }, { "idempotency-key": "auth-dead" });
    expectProblem(dead, 409, "idempotency_key_in_use", "Idempotency-Key");
    expect([dead.headers.get("retry-after"), dead.body.detail]).toEqual(["30", expect.stringContaining(`its claim ends by ${held.expires_at} at the latest, if the request that holds it has stopped`)]);
    expect((await m.post("/v1/payment/auth", { payment_id: body.payment_id, terminal_id: terminal }, { "idempotency-key": "auth-1" })).headers.get("retry-after")).toBe("1");
    // the started collection is no answer of the blocking call: none is recorded with it (a request
    // cut off now leaves nothing to replay; its retry runs once the claim is freed)
    expect(await api.store.readIdempotency("acct_i:auth-1")).toMatchObject({ state: "in_flight", status: 0, body: null });
    await m.post("/sim/terminal/present-card", { terminal_id: terminal });
    const first = await blocking;
    expect(first.body.status).toBe("requires_capture");
    const retry = await m.post("/v1/payment/auth", { payment_id: body.payment_id, terminal_id: terminal }, { "idempotency-key": "auth-1" });
    expect(retry.body).toEqual(first.body);
  });

  it("concurrent retries of a capture capture once (same key, and different keys)", async () => {
    api = await startApi();
    const m = await api.merchant("acct_i");
    for (const keys of [() => "same", (i: number) => `k-${i}`]) {
      const paymentId = await authorized(m);
      const before = await count("PaymentCaptured");
      const answers = await Promise.all(
        Array.from({ length: 12 }, (_, i) => m.post("/v1/payment/capture", { payment_id: paymentId, amount: "10.00" }, { "idempotency-key": keys(i) })),
      );
      const ok = answers.filter((a) => a.status === 200);
      expect(ok.length).toBeGreaterThanOrEqual(1);
      for (const a of ok) expect(a.body).toEqual(ok[0]!.body);
      for (const a of answers.filter((a) => a.status !== 200)) {
        expect(a.status).toBe(409);
        expect(["idempotency_key_in_use", "payment_intent_unexpected_state"]).toContain(a.body.code);
      }
      expect(await count("PaymentCaptured")).toBe(before + 1);
    }
  });
});

describe("Idempotency-Key records keep no secret in plaintext", () => {
  it("an endpoint's secret and an intent's client secret are sealed in the store; a replay answers the first answer byte for byte", async () => {
    api = await startApi();
    const m = await api.merchant("acct_sealed", "B");
    const post = (path: string, body: object, key: string) =>
      fetch(api.base + path, { method: "POST", headers: { authorization: `Bearer ${m.key}`, "content-type": "application/json", "idempotency-key": key }, body: JSON.stringify({ external_account_id: m.account, ...body }) });
    const cases = [
      { path: "/v2/webhook_endpoints", body: { url: "https://hooks.example.com/x" }, key: "hook-1", secret: "secret" },
      { path: "/v2/payment/intent", body: { amount: "4.00", payment_method_types: "card_present", capture_method: "manual" }, key: "intent-1", secret: "client_secret" },
    ];
    for (const { path, body, key, secret } of cases) {
      const first = await post(path, body, key);
      const firstText = await first.text();
      const value = JSON.parse(firstText)[secret] as string;
      // a real secret (base64url: letters, digits, '_' and '-'), so that not finding it below means something
      expect(value, path).toMatch(/[\w-]{16,}/);
      const record = await api.store.readIdempotency(`${m.account}:${key}`);
      expect(record?.state).toBe("done");
      expect(JSON.stringify(record), path).not.toContain(value);
      expect(record?.body).toEqual({ sealed: expect.stringMatching(/^[\w-]+$/) });
      const replay = await post(path, body, key);
      expect(replay.headers.get("idempotent-replayed")).toBe("true");
      expect(await replay.text(), path).toBe(firstText);
    }
  });
});
