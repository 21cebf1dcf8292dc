import { beforeAll, describe, expect, it } from "vitest";
import { asOf } from "../../src/audit/as-of.js";
import { paymentRecord } from "../../src/present/payment-record.js";
import { replay } from "../../src/audit/replay.js";
import { InvalidRequest } from "../../src/errors.js";
import { runFlows, type Flows } from "./flows.js";

let flows: Flows;
beforeAll(async () => {
  flows = await runFlows();
});

describe("asOf", () => {
  it("at each event's time equals the record after that event (the last one of that instant)", async () => {
    let checked = 0;
    for (const [flow, id] of Object.entries(flows.payments)) {
      const events = await flows.engine.store.readStream(`payment-${id}`);
      for (const e of events) {
        // events of one command share its instant: the record then is after the last of them
        const upTo = events.map((x) => x.metadata.timestamp).lastIndexOf(e.metadata.timestamp);
        const expected = paymentRecord(replay(events.slice(0, upTo + 1)).final, events[upTo]!.metadata.request_id);
        const got = await asOf(flows.engine.store, id, e.metadata.timestamp);
        expect(got?.record, `${flow}@${e.revision}`).toEqual(expected);
        expect(got?.revision).toBe(upTo);
        checked++;
      }
      const last = await asOf(flows.engine.store, id, "2100-01-01T00:00:00Z");
      expect(last?.record).toEqual(await flows.engine.getPayment({ external_account_id: last!.record.external_account_id, payment_id: id }));
    }
    expect(checked).toBeGreaterThan(40);
  });

  it("is null before the payment existed, and between events shows the earlier state", async () => {
    const id = flows.payments.terminal_manual!;
    const events = await flows.engine.store.readStream(`payment-${id}`);
    expect(await asOf(flows.engine.store, id, "2025-12-31T23:59:59Z")).toBeNull();
    const between = new Date(Date.parse(events[5]!.metadata.timestamp) + 500).toISOString();
    expect((await asOf(flows.engine.store, id, between))?.record.status).toBe("succeeded");
    expect((await asOf(flows.engine.store, id, between))?.record.amount_refunded).toBe("0.00");
  });

  it("names the field of a bad timestamp: not a date-time, a date that does not exist, a time without its offset", async () => {
    for (const bad of ["yesterday", "2026-11-31T00:00:00Z", "2025-02-29T00:00:00Z", "2026-01-01T00:00:04"]) {
      await expect(asOf(flows.engine.store, flows.payments.terminal_manual!, bad), bad).rejects.toThrow(InvalidRequest);
      await expect(asOf(flows.engine.store, flows.payments.terminal_manual!, bad), bad).rejects.toThrow(/^timestamp: .* of a real date with its offset/);
    }
    // the same moment with another offset reads the same
    const id = flows.payments.terminal_manual!;
    expect(await asOf(flows.engine.store, id, "2026-01-01T01:00:04+01:00")).toEqual(await asOf(flows.engine.store, id, "2026-01-01T00:00:04Z"));
  });
});
