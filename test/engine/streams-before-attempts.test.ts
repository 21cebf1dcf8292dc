// Streams written before attempts were recorded (a fixture captured from cardflow 9ddf535 running
// every flow, test/engine/fixtures/streams-before-attempts.json) still replay, load and take new
// commands: outcomes without an attempt id are accepted while no attempt is in flight.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { PaymentRecord } from "../../src/present/payment-record.js";
import { manualClock } from "../../src/clock.js";
import { createEngine } from "../../src/engine.js";
import { sequentialIds } from "../../src/ids.js";
import { replay } from "../../src/audit/replay.js";
import { createMemoryStore } from "../../src/store/memory/index.js";
import type { RecordedEvent } from "../../src/store/port.js";
import { paymentsProjection } from "../../projections/payments.js";

const fixture = JSON.parse(readFileSync(new URL("./fixtures/streams-before-attempts.json", import.meta.url), "utf8")) as {
  payments: Record<string, string>;
  records: Record<string, PaymentRecord>;
  events: RecordedEvent[];
};

async function engineOnFixture() {
  const store = createMemoryStore();
  const byStream = new Map<string, RecordedEvent[]>();
  for (const e of fixture.events) byStream.set(e.stream, [...(byStream.get(e.stream) ?? []), e]);
  for (const [stream, events] of byStream) await store.append(stream, events, { expectedRevision: "no_stream" });
  return createEngine({ store, clock: manualClock(), ids: sequentialIds(1_000_000) });
}

describe("streams written before attempt events", () => {
  it("hold no attempt events (the fixture is what the old version wrote)", () => {
    expect(fixture.events.some((e) => e.type.endsWith("Attempted") || e.type === "AttemptAbandoned")).toBe(false);
    expect(Object.keys(fixture.payments).length).toBeGreaterThanOrEqual(10);
  });

  it("replay purely with no illegal event, to the records the old version answered", async () => {
    const engine = await engineOnFixture();
    for (const [name, id] of Object.entries(fixture.payments)) {
      const events = await engine.store.readStream(`payment-${id}`);
      expect(replay(events).illegal, name).toEqual([]);
      const record = await engine.getPayment({ external_account_id: fixture.records[name]!.external_account_id, payment_id: id });
      expect(record, name).toEqual(fixture.records[name]);
    }
    // and every read model rebuilds from them
    await engine.projections.catchUp();
    expect((await engine.readModels.list(paymentsProjection.name, "")).length).toBe(Object.keys(fixture.payments).length);
  });

  it("take new commands, which record attempts from then on", async () => {
    const engine = await engineOnFixture();
    const ref = { external_account_id: fixture.records.reader_manual!.external_account_id, payment_id: fixture.payments.reader_manual! };
    const before = fixture.records.reader_manual!;
    expect(before.status).toBe("succeeded");
    const refunded = await engine.refund({ ...ref, amount: "1.00" });
    expect(refunded.amount_refunded).toBe("1.00");
    const types = (await engine.store.readStream(`payment-${ref.payment_id}`)).map((e) => e.type);
    expect(types.slice(-2)).toEqual(["RefundAttempted", "PaymentRefunded"]);
  });

  it("an old intent's client secret, recorded in plain text, is still checked (digests compared)", async () => {
    const engine = await engineOnFixture();
    const created = fixture.events.find((e) => e.type === "PaymentIntentCreated" && (e.data as { payment_id: string }).payment_id === fixture.payments.reader_manual)!;
    const secret = (created.data as { client_secret: string }).client_secret;
    expect(secret).toMatch(/_secret_/);
    // the right secret gets past the check (the payment is done: 409); a wrong one reads as missing
    await expect(engine.processPayment({ client_secret: secret })).rejects.toMatchObject({ status: 409 });
    await expect(engine.processPayment({ client_secret: `${secret.slice(0, -1)}X` })).rejects.toMatchObject({ status: 401 });
  });
});
