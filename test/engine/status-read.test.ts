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
