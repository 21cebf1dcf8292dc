// The example adapter's poll of late outcomes (GET /v1/events): a report cardflow refuses for good
// (a payment it does not have) is told and passed, so the reports after it are applied; a store
// that does not answer holds the page, read again on the next poll; the cursor is kept in the
// service's state, so a restart reads what was reported while no process polled.
import { describe, expect, it } from "vitest";
import { manualClock } from "../../src/clock.js";
import { NotFound } from "../../src/errors.js";
import { StoreUnavailable } from "../../src/store/port/unavailable.js";
import type { Outbound } from "../../src/outbound/client.js";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { adapterState, memoryAdapterState } from "../../src/processors/adapters.js";
import { createSqliteStore } from "../../src/store/sqlite/index.js";
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

  it("the cursor is kept: a start reads on from where the last process left off, not from its own now", async () => {
    const clock = manualClock();
    const { outbound, asked } = processorFeed();
    const state = memoryAdapterState();
    const first = createHttpProcessor({ outbound, baseUrl: "https://processor.test", apiKey: "k", clock, state });
    first.connect(async () => {
      throw new StoreUnavailable("stopped before it applied anything"); // the process "dies" with the page unread
    });
    await polls(clock, 1);
    first.close();
    // it learnt where now was ("0") and kept it; the page after it was never applied
    expect(await state.get("http-adapter  https://processor.test events cursor")).toBe("0");
    asked.length = 0;
    const applied: string[] = [];
    const second = createHttpProcessor({ outbound, baseUrl: "https://processor.test", apiKey: "k", clock, state });
    second.connect(async (payment_id) => void (payment_id !== "pi_not_ours" && applied.push(payment_id)));
    await polls(clock, 1);
    second.close();
    expect(asked.map((u) => new URL(u).search)[0]).toBe("?after=0");
    expect(applied).toEqual(["pi_1", "pi_2"]);
    expect(await state.get("http-adapter  https://processor.test events cursor")).toBe("3");
    // two adapters of one processor URL (two accounts there, A and B) keep their cursors apart
    const named = createHttpProcessor({ outbound, baseUrl: "https://processor.test", apiKey: "k2", clock, state, name: "B" });
    asked.length = 0;
    named.connect(async () => undefined);
    await polls(clock, 1);
    named.close();
    expect(asked.map((u) => new URL(u).search)[0]).toBe(""); // its own "now", not the other's cursor
    expect(await state.get("http-adapter B https://processor.test events cursor")).toEqual(expect.any(String));
  });

  it("the service keeps it in its read-model store: another handle (a process started later) reads it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cardflow-adapter-state-"));
    try {
      const path = join(dir, "cardflow.sqlite");
      const one = createSqliteStore({ path });
      await adapterState(one.readModels).set("k", "cur_1");
      await adapterState(one.readModels).set("k", "cur_2");
      const two = createSqliteStore({ path });
      expect([await adapterState(two.readModels).get("k"), await adapterState(two.readModels).get("other")]).toEqual(["cur_2", null]);
      for (const s of [one, two]) (await s.readModels.close?.(), await s.events.close?.());
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
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
