// The payment record's schema-compiled serializer (src/http/serializer.ts) writes JSON.stringify's
// bytes: for records of every status the engine produces (optional fields present and absent,
// nulls, amounts as strings), as /v1 and /v2 present them, and with their text fields and
// external_transaction_id replaced by arbitrary values (any Unicode, quotes, control characters,
// lone surrogates; strings, integers, null). test/http/harness.ts checks every live answer too.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { manualClock } from "../../src/clock.js";
import { createEngine } from "../../src/engine.js";
import { presentPayment } from "../../src/present/api-versions.js";
import { CreatedIntentOut, PaymentRecordOut, type Version } from "../../src/http/schemas.js";
import { answerSchema, preSerialized, preSerializedText, serializerOf } from "../../src/http/serializer.js";
import { EventPageOut } from "../../src/http/routes/events.js";
import { sequentialIds } from "../../src/ids.js";
import { createSimulators } from "../../src/processors/simulator.js";
import type { PaymentRecord } from "../../src/present/payment-record.js";

/** One payment in each status (and a refunded one, a declined one, a timed-out one), on fresh engines. */
async function recordsOfEveryStatus(): Promise<PaymentRecord[]> {
  const clock = manualClock();
  const ids = sequentialIds();
  const records: PaymentRecord[] = [];
  for (const captures of ["immediate", "requested"] as const) {
    const simulators = createSimulators({ clock, ids, captures });
    const engine = createEngine({ clock, ids, processors: simulators });
    const account = `acct_${captures}`;
    await engine.openAccount({ external_account_id: account, processor: "A", currency: "USD" });
    const charge = (amount: string | number, capture_method: "manual" | "automatic", payment_method_id = "pm_card_visa", external_payment_id?: string | number) =>
      engine.createIntent({ external_account_id: account, amount, payment_method_types: "card", capture_method, payment_method_id, external_customer_id: "cus_1", ...(external_payment_id === undefined ? {} : { external_payment_id }) });
    const ref = (payment_id: string) => ({ external_account_id: account, payment_id });

    const created = await charge("19.99", "manual", "pm_card_visa", 9001);
    records.push(await engine.getPayment(ref(created.payment_id)));
    records.push(await engine.authorize(ref(created.payment_id)));
    records.push(await engine.cancel(ref(created.payment_id)));
    const paid = await charge(50, "automatic", "pm_card_mastercard", "order-7");
    records.push(await engine.authorize(ref(paid.payment_id)));
    if (captures === "immediate") records.push(await engine.refund({ ...ref(paid.payment_id), amount: "20.00" }));
    const declined = await charge("1.00", "automatic", "pm_card_declined");
    records.push(await engine.authorize(ref(declined.payment_id)));
    const { terminal_id } = await engine.registerTerminal({ external_account_id: account, terminal_type: "A_async" });
    const present = await engine.createIntent({ external_account_id: account, amount: "3.00", payment_method_types: "card_present", capture_method: "manual" });
    records.push(await engine.authorize({ ...ref(present.payment_id), terminal_id }));
    await clock.advance(120_000); // the shopper never comes: last_error and last_error_code
    for (let i = 0; i < 100 && (await engine.getPayment(ref(present.payment_id))).status === "payment_method_requested"; i++) await new Promise((r) => setTimeout(r, 5));
    records.push(await engine.getPayment(ref(present.payment_id)));
    await engine.close();
  }
  return records;
}

const records = await recordsOfEveryStatus();
const serializers = { v1: serializerOf(answerSchema(PaymentRecordOut("v1"))!), v2: serializerOf(answerSchema(PaymentRecordOut("v2"))!) };

describe("the payment record's compiled serializer", () => {
  it("covers every status, with and without the optional fields", () => {
    expect(new Set(records.map((r) => r.status))).toEqual(new Set(["requires_payment_method", "payment_method_requested", "requires_capture", "capture_requested", "succeeded", "error", "canceled"]));
    expect(records.some((r) => r.payment === undefined) && records.some((r) => r.payment !== undefined)).toBe(true);
    expect(records.some((r) => r.last_error !== undefined && r.last_error_code !== undefined)).toBe(true);
    expect(records.some((r) => r.avs_response_code !== undefined)).toBe(true);
    expect(new Set(records.map((r) => typeof r.external_transaction_id))).toEqual(new Set(["number", "string", "object"]));
  });

  it("writes JSON.stringify's bytes for every record, /v1 and /v2", () => {
    for (const record of records) {
      for (const version of ["v1", "v2"] as Version[]) {
        const answer = presentPayment(record, version);
        expect(serializers[version](answer)).toBe(JSON.stringify(answer));
      }
    }
  });

  it("writes JSON.stringify's bytes whatever the text fields hold", () => {
    const text = fc.string({ unit: "binary", maxLength: 40 });
    fc.assert(
      fc.property(
        fc.constantFrom(...records),
        fc.record({ payment_id: text, external_account_id: text, authorization_code: fc.option(text), external_customer_id: fc.option(text), last_error: text, cardholder_name: fc.option(text) }),
        fc.oneof(text, fc.maxSafeInteger(), fc.constant(null)),
        (record, fields, external_transaction_id) => {
          const { cardholder_name, last_error, ...top } = fields;
          // spreading over the record keeps its fields in their order
          const changed: PaymentRecord = {
            ...record,
            ...top,
            external_transaction_id,
            ...(record.payment ? { payment: { ...record.payment, cardholder_name } } : {}),
            ...(record.last_error !== undefined ? { last_error } : {}),
          };
          expect(serializers.v2(changed)).toBe(JSON.stringify(changed));
        },
      ),
      { numRuns: 300 },
    );
  });

  it("is compiled for closed schemas without unions; the others keep JSON.stringify", () => {
    // closed: every field the records carry is listed, and nothing else may be
    for (const version of ["v1", "v2"] as Version[]) {
      const schema = answerSchema(PaymentRecordOut(version)) as { type: string; additionalProperties: boolean; properties: Record<string, unknown> };
      expect([schema.type, schema.additionalProperties]).toEqual(["object", false]);
      const fields = new Set(records.flatMap((r) => Object.keys(presentPayment(r, version))));
      expect([...fields].filter((f) => !(f in schema.properties))).toEqual([]);
    }
    // a created intent, with and without its client secret, written as JSON.stringify writes it
    const created = answerSchema(CreatedIntentOut("v1"));
    expect(created).toMatchObject({ type: "object", additionalProperties: false });
    const write = serializerOf(created!);
    const intent = { payment_id: "pay_1", status: "requires_payment_method", external_transaction_id: "order-7", request_id: 3 };
    for (const answer of [intent, { ...intent, external_transaction_id: 42, client_secret: 'pay_1_secret_"x"' }, { ...intent, external_transaction_id: null }]) {
      expect(write(answer)).toBe(JSON.stringify(answer));
    }
    // the event page has unions (event data of every type): it keeps JSON.stringify
    expect(answerSchema(EventPageOut)).toBeUndefined();
    expect(JSON.stringify(z.toJSONSchema(EventPageOut, { io: "output", unrepresentable: "any" }))).toMatch(/"(anyOf|oneOf)"|"additionalProperties":\{\}/);
  });

  it("writes only the fields its schema lists: a field added to a record but not to its schema is left out (so the harness's byte check catches it)", () => {
    const record = presentPayment(records[0]!, "v2");
    const extended = { ...record, field_not_in_the_schema: "x" };
    expect(serializers.v2(extended)).toBe(JSON.stringify(record));
    expect(serializers.v2(extended)).not.toBe(JSON.stringify(extended));
  });

  it("sends an answer written out already (a list's page) as it is; JSON.stringify refuses one rather than send {}", () => {
    const json = JSON.stringify(presentPayment(records[0]!, "v2"));
    expect(serializers.v2(preSerialized(json))).toBe(json);
    expect(preSerializedText(preSerialized(json))).toBe(json);
    expect(preSerializedText({ data: json })).toBeUndefined();
    expect(() => JSON.stringify(preSerialized(json))).toThrow(/route's serializer/);
  });
});
