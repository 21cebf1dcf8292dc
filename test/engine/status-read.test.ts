// The status read answers from the engine's cached state only when the store proves nothing was
// appended since that state was read (EventStore.changeMark): here, engines sharing one SQLite
// connection (the store's own commits, which SQLite's data_version does not count). Other
// processes on the same file: test/store/processes.test.ts.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createEngine } from "../../src/engine.js";
import { sequentialIds } from "../../src/ids.js";
import type { EventStore } from "../../src/store/port.js";
import { createSqliteStore } from "../../src/store/sqlite/index.js";
import { scriptedProcessors } from "../support/scripted-processor.js";
import { ACCOUNT, AUTHORIZED, STORED_CARD_INTENT } from "../store/processes/stores.js";

const dir = mkdtempSync(join(tmpdir(), "cardflow-status-read-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function twoEngines() {
  const { events, readModels } = createSqliteStore({ path: join(dir, `${Math.random()}.db`) });
  const counted = { streamReads: 0 };
  const store: EventStore = { ...events, readStream: (...args) => (counted.streamReads++, events.readStream(...args)) };
  const processors = scriptedProcessors();
  processors.nextAuthorization = AUTHORIZED;
  const [first, second] = [0, 1].map((i) => createEngine({ store, readModels, processors, ids: sequentialIds(i * 1_000_000) })) as [ReturnType<typeof createEngine>, ReturnType<typeof createEngine>];
  await first.openAccount({ external_account_id: ACCOUNT });
  const { payment_id } = await first.createIntent(STORED_CARD_INTENT);
  await first.authorize({ external_account_id: ACCOUNT, payment_id });
  const ref = { external_account_id: ACCOUNT, payment_id };
  return { first, second, ref, counted, close: () => Promise.all([events.close(), readModels.close()]) };
}

describe("status read over a cached state", () => {
  it("reads no stream while nothing was appended since the state was read", async () => {
    const { second, ref, counted, close } = await twoEngines();
    expect((await second.getPayment(ref)).status).toBe("requires_capture");
    const before = counted.streamReads;
    for (let i = 0; i < 5; i++) expect((await second.getPayment(ref)).status).toBe("requires_capture");
    expect(counted.streamReads).toBe(before);
    await close();
  });

  it("appends to other payments leave a cached state current: no stream read", async () => {
    const { first, second, ref, counted, close } = await twoEngines();
    expect((await second.getPayment(ref)).status).toBe("requires_capture");
    let other = "";
    for (let i = 0; i < 3; i++) {
      other = (await first.createIntent(STORED_CARD_INTENT)).payment_id;
      await first.authorize({ external_account_id: ACCOUNT, payment_id: other });
      const reads = counted.streamReads;
      expect((await second.getPayment(ref)).status).toBe("requires_capture");
      expect(counted.streamReads).toBe(reads);
    }
    // while a payment the second engine has not read is read from its stream
    const reads = counted.streamReads;
    expect((await second.getPayment({ external_account_id: ACCOUNT, payment_id: other })).status).toBe("requires_capture");
    expect(counted.streamReads).toBe(reads + 1);
    await close();
  });

  it("the engine that appended answers its next status read from its own append: no stream read", async () => {
    const { first, ref, counted, close } = await twoEngines();
    for (const command of [() => first.capture({ ...ref, amount: "100.00" }), () => first.refund({ ...ref, amount: "10.00" })]) {
      await command();
      const reads = counted.streamReads;
      const payment = await first.getPayment(ref);
      expect(counted.streamReads).toBe(reads);
      expect(payment.amount_captured).toBe("100.00");
    }
    expect((await first.getPayment(ref)).amount_refunded).toBe("10.00");
    await close();
  });

  it("an append through another connection after this engine's own is read, not taken from the cache", async () => {
    const path = join(dir, `${Math.random()}.db`);
    const [a, b] = [createSqliteStore({ path }), createSqliteStore({ path })];
    const processors = scriptedProcessors();
    processors.nextAuthorization = AUTHORIZED;
    const engine = (store: ReturnType<typeof createSqliteStore>, i: number) => createEngine({ store: store.events, readModels: store.readModels, processors, ids: sequentialIds(i * 1_000_000) });
    const [first, second] = [engine(a, 0), engine(b, 1)];
    await first.openAccount({ external_account_id: ACCOUNT });
    const { payment_id } = await first.createIntent(STORED_CARD_INTENT);
    const ref = { external_account_id: ACCOUNT, payment_id };
    await first.authorize(ref); // first's own append: its state is cached with the append's mark
    expect((await first.getPayment(ref)).status).toBe("requires_capture");
    await second.capture({ ...ref, amount: "40.00" });
    const seen = await first.getPayment(ref);
    expect([seen.status, seen.amount_captured]).toEqual(["succeeded", "40.00"]);
    await Promise.all([a, b].flatMap((s) => [s.events.close(), s.readModels.close()]));
  });

  it("shows another engine's append on the same connection at once", async () => {
    const { first, second, ref, close } = await twoEngines();
    expect((await second.getPayment(ref)).status).toBe("requires_capture");
    await first.capture({ ...ref, amount: "100.00" });
    expect((await second.getPayment(ref)).amount_captured).toBe("100.00");
    await first.refund({ ...ref, amount: "10.00" });
    expect((await second.getPayment(ref)).amount_refunded).toBe("10.00");
    await close();
  });
});
