// The example adapter's poll of late outcomes (GET /v1/events): a report cardflow refuses for good
// (a payment it does not have) is told and passed, so the reports after it are applied; a store
// that does not answer holds the page, read again on the next poll.
import { describe, expect, it } from "vitest";
import { manualClock } from "../../src/clock.js";
import { NotFound } from "../../src/errors.js";
import { StoreUnavailable } from "../../src/store/port/unavailable.js";
import type { Outbound } from "../../src/outbound/client.js";
import { createHttpProcessor } from "../../src/processors/http-adapter.js";

const settled = (payment_id: string) => ({ payment_id, event: { kind: "capture_settled", amount: "5.00" } });
const page = [settled("pi_1"), settled("pi_not_ours"), settled("pi_2")];

/** A processor whose event feed holds `page` after the first poll's "now" (cursor 0). */
function processorFeed() {
  const asked: string[] = [];
  const outbound = {
    request: async (url: string) => {
      asked.push(url);
      const after = new URL(url).searchParams.get("after");
      return { status: 200, body: JSON.stringify(after === null ? { events: [], next: "0" } : { events: page.slice(Number(after)), next: String(page.length) }) };
    },
  } as unknown as Outbound;
  return { outbound, asked };
}

async function polls(clock: ReturnType<typeof manualClock>, n: number) {
  for (let i = 0; i < n; i++) {
    await clock.advance(1_000);
    for (let j = 0; j < 10; j++) await new Promise((r) => setImmediate(r));
  }
}

describe("the HTTP adapter's poll of late outcomes", () => {
  it("a report refused for good is told and passed: the ones after it are applied, and the cursor moves on", async () => {
    const clock = manualClock();
    const { outbound, asked } = processorFeed();
    const errors: unknown[] = [];
    const processor = createHttpProcessor({ outbound, baseUrl: "https://processor.test", apiKey: "k", clock, onError: (e) => errors.push(e) });
    const applied: string[] = [];
    processor.connect(async (payment_id) => {
      if (payment_id === "pi_not_ours") throw new NotFound("payment", payment_id);
      if (applied.includes(payment_id)) throw Object.assign(new Error("already recorded"), { status: 409 });
      applied.push(payment_id);
    });
    await polls(clock, 3);
    processor.close();
    expect(applied).toEqual(["pi_1", "pi_2"]);
    expect(errors.map(String)).toEqual([expect.stringContaining("processor report for payment pi_not_ours refused")]);
    expect(asked.slice(0, 3).map((u) => new URL(u).search)).toEqual(["", "?after=0", "?after=3"]);
  });

  it("a store that does not answer holds the page: read again on the next poll, nothing skipped", async () => {
    const clock = manualClock();
    const { outbound, asked } = processorFeed();
    const processor = createHttpProcessor({ outbound, baseUrl: "https://processor.test", apiKey: "k", clock });
    const applied: string[] = [];
    let down = true;
    processor.connect(async (payment_id) => {
      if (down && payment_id === "pi_2") throw new StoreUnavailable("the store does not answer");
      if (payment_id !== "pi_not_ours" && !applied.includes(payment_id)) applied.push(payment_id);
    });
    await polls(clock, 2);
    expect(asked.map((u) => new URL(u).search)).toEqual(["", "?after=0", "?after=0"]);
    down = false;
    await polls(clock, 1);
    processor.close();
    expect(applied).toEqual(["pi_1", "pi_2"]);
  });
});
