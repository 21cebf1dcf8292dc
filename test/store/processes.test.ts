// Engines in separate processes on one durable store (SQLite file, PostgreSQL database):
// - two processes racing captures and refunds on the same payments never over-capture, never
//   over-refund and lose no acknowledged command;
// - a process killed with SIGKILL mid-load loses no acknowledged command, leaves nothing
//   half-written, and its durable projections resume to exactly what a rebuild from zero gives.
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { foldStored, type PaymentState } from "../../machines/fold.js";
import { createEngine } from "../../src/engine.js";
import { PROJECTIONS } from "../../projections/registry.js";
import { createMemoryReadModels } from "../../src/store/memory/index.js";
import type { ReadModelStore, RecordedEvent } from "../../src/store/port.js";
import { createProjectionRunner } from "../../projections/runner.js";
import { scriptedProcessors } from "../support/scripted-processor.js";
import { testDatabase } from "../support/postgres.js";
import { ACCOUNT, AUTHORIZED, openDurable, startWorker, STORED_CARD_INTENT, type Ack, type StoreSpec } from "./processes/stores.js";
import { paymentsProjection } from "../../projections/payments.js";

const dir = mkdtempSync(join(tmpdir(), "cardflow-processes-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const database = await testDatabase();

const specs: Record<"sqlite" | "postgres", () => StoreSpec> = {
  sqlite: () => ({ kind: "sqlite", path: join(dir, `${randomUUID()}.db`) }),
  postgres: () => ({ kind: "postgres", url: database, schema: `t_${randomUUID().replaceAll("-", "").slice(0, 12)}` }),
};

/** Opens the account and `n` authorized stored-card payments, in this process. */
async function setup(spec: StoreSpec, n: number): Promise<string[]> {
  const { events, readModels } = await openDurable(spec);
  const processors = scriptedProcessors();
  processors.nextAuthorization = AUTHORIZED;
  const engine = createEngine({ store: events, readModels, processors });
  await engine.openAccount({ external_account_id: ACCOUNT });
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const { payment_id } = await engine.createIntent(STORED_CARD_INTENT);
    await engine.authorize({ external_account_id: ACCOUNT, payment_id });
    ids.push(payment_id);
  }
  await engine.close();
  return ids;
}

const count = (acks: Ack[], op: Ack["op"], paymentId: string) => acks.filter((a) => a.op === op && "payment_id" in a && a.payment_id === paymentId).length;

/** Every payment stream folded through the machine (throws on an event it does not allow). */
function foldAll(all: RecordedEvent[]): Map<string, { state: PaymentState; types: string[]; revisions: number[] }> {
  const payments = new Map<string, { state: PaymentState; types: string[]; revisions: number[] }>();
  for (const e of all) {
    if (!e.stream.startsWith("payment-")) continue;
    const id = e.stream.slice("payment-".length);
    const p = payments.get(id);
    const { state } = foldStored(p?.state, e);
    payments.set(id, { state, types: [...(p?.types ?? []), e.type], revisions: [...(p?.revisions ?? []), e.revision] });
  }
  return payments;
}

async function projectionDocs(readModels: ReadModelStore) {
  return Promise.all(PROJECTIONS.map(async (p) => ({ name: p.name, checkpoint: await readModels.checkpoint(p.name), docs: await readModels.list(p.name, "") })));
}

describe.each(["sqlite", "postgres"] as const)("engine processes on one %s store", (kind) => {
  it("two processes racing captures and refunds on the same payments: one capture each, refunds never above it, nothing lost", async () => {
    const spec = specs[kind]();
    const ids = await setup(spec, 6);
    const acks: Ack[] = [];
    // Both keep the shared read models live: their commits state the checkpoint they folded from,
    // so neither applies an event twice.
    const workers = [true, true].map((liveProjections) => startWorker({ store: spec, mode: "race", paymentIds: ids, liveProjections }, (a) => acks.push(a)));
    expect(await Promise.all(workers.map((w) => w.exited))).toEqual([0, 0]);
    // 2 processes x (1 capture + 15 refunds of 10.00) per payment of 100.00: most must be refused
    const refused = acks.flatMap((a) => (a.op === "done" ? [a.refused] : []));
    expect(refused).toHaveLength(2);
    expect(refused[0]! + refused[1]!).toBeGreaterThanOrEqual(ids.length * (1 + 20));

    const { events, readModels } = await openDurable(spec);
    const payments = foldAll(await events.readAll());
    for (const id of ids) {
      const { state, types } = payments.get(id)!;
      expect(types.filter((t) => t === "PaymentCaptured")).toHaveLength(1);
      expect(count(acks, "captured", id)).toBe(1);
      const refunds = types.filter((t) => t === "PaymentRefunded").length;
      expect(refunds).toBe(count(acks, "refunded", id)); // every acknowledged refund, and no other
      expect(refunds).toBeLessThanOrEqual(10);
      const engine = createEngine({ store: events, readModels, processors: scriptedProcessors() });
      const record = await engine.getPayment({ external_account_id: ACCOUNT, payment_id: id });
      expect([record.amount_captured, record.amount_refunded]).toEqual(["100.00", `${refunds * 10}.00`]);
      expect(state.status).toBe(record.status);
    }
    // The read models kept live while the other process appended equal a rebuild from zero.
    await createProjectionRunner({ store: events, readModels, projections: PROJECTIONS }).catchUp();
    const rebuilt = createMemoryReadModels();
    await createProjectionRunner({ store: events, readModels: rebuilt, projections: PROJECTIONS }).catchUp();
    expect(await projectionDocs(readModels)).toEqual(await projectionDocs(rebuilt));
    await Promise.all([events.close(), readModels.close()]);
  });

  it("a status read shows every change another process acknowledged, though this process holds the payment's state cached", async () => {
    const spec = specs[kind]();
    const [id] = (await setup(spec, 1)) as [string];
    const { events, readModels } = await openDurable(spec);
    const engine = createEngine({ store: events, readModels, processors: scriptedProcessors() });
    const read = () => engine.getPayment({ external_account_id: ACCOUNT, payment_id: id });
    expect((await read()).status).toBe("requires_capture");
    expect((await read()).status).toBe("requires_capture"); // answered from the cached state
    // each acknowledgement of the other process is read back here, in order, as it arrives
    let checks = Promise.resolve();
    let refunds = 0;
    const seen: string[] = [];
    const worker = startWorker({ store: spec, mode: "race", paymentIds: [id], liveProjections: false }, (ack) => {
      if (ack.op === "refunded") refunds++;
      const atLeast = refunds * 10;
      checks = checks.then(async () => {
        if (ack.op === "done") return;
        const record = await read();
        seen.push(ack.op);
        expect(record.amount_captured).toBe("100.00");
        expect(Number(record.amount_refunded)).toBeGreaterThanOrEqual(atLeast);
      });
    });
    expect(await worker.exited).toBe(0);
    await checks;
    expect(seen).toEqual(["captured", ...Array(10).fill("refunded")]);
    expect((await read()).amount_refunded).toBe("100.00");
    await engine.close();
  });

  it("SIGKILL mid-load: every acknowledged command is stored, nothing half-written, projections resume to a rebuild's result", async () => {
    const spec = specs[kind]();
    await setup(spec, 0);
    const acks: Ack[] = [];
    const worker = startWorker({ store: spec, mode: "load", concurrency: 8, liveProjections: true }, (a) => {
      acks.push(a);
      if (acks.length === 200) worker.child.kill("SIGKILL");
    });
    expect(await worker.exited).toBeNull(); // killed, not finished
    expect(worker.child.signalCode).toBe("SIGKILL");
    expect(acks.length).toBeGreaterThanOrEqual(200);

    const { events, readModels } = await openDurable(spec);
    const all = await events.readAll();
    const positions = all.map((e) => e.position);
    expect(new Set(positions).size).toBe(positions.length);
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
    if (kind === "sqlite") expect(positions).toEqual(all.map((_, i) => i + 1)); // one writer at a time: no gaps at all
    const payments = foldAll(all); // every stream is a sequence the machine allows
    for (const [, p] of payments) expect(p.revisions).toEqual(p.types.map((_, i) => i));
    const created = acks.flatMap((a) => (a.op === "created" ? [a.payment_id] : []));
    expect(created.length).toBeGreaterThan(8);
    for (const id of created) {
      const p = payments.get(id)!;
      expect(p.types[0]).toBe("PaymentIntentCreated");
      if (count(acks, "authorized", id)) expect(p.types).toContain("PaymentAuthorized");
      if (count(acks, "captured", id)) expect(p.types).toContain("PaymentCaptured");
      expect(p.types.filter((t) => t === "PaymentRefunded").length).toBeGreaterThanOrEqual(count(acks, "refunded", id));
    }

    // The killed process kept its projections live: resume them from their durable checkpoints...
    expect(await readModels.checkpoint(paymentsProjection.name)).toBeGreaterThan(0);
    await createProjectionRunner({ store: events, readModels, projections: PROJECTIONS }).catchUp();
    // ...and they equal a rebuild from position zero.
    const rebuilt = createMemoryReadModels();
    await createProjectionRunner({ store: events, readModels: rebuilt, projections: PROJECTIONS }).catchUp();
    const resumed = await projectionDocs(readModels);
    expect(resumed).toEqual(await projectionDocs(rebuilt));
    expect(resumed.every((p) => p.checkpoint === positions.at(-1))).toBe(true);

    // and the restarted engine carries on where the killed one stopped
    const engine = createEngine({ store: events, readModels, processors: scriptedProcessors() });
    const captured = created.find((id) => count(acks, "captured", id) && payments.get(id)!.types.filter((t) => t === "PaymentRefunded").length < 10)!;
    const record = await engine.refund({ external_account_id: ACCOUNT, payment_id: captured, amount: "10.00" });
    expect(record.amount_refunded).not.toBe("0.00");
    await engine.close();
  });
});
