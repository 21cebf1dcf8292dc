// `cardflow reconcile` on the service's store: --dry-run shows what it would append and appends
// nothing; then a pass appends the outcome the processors' ledger (beside the store) recorded.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Command } from "commander";
import { afterAll, expect, it } from "vitest";
import type { AttemptEvent } from "../../../machines/events.js";
import { registerReconcile } from "../../../src/cli/reconcile.js";
import { systemClock } from "../../../src/clock.js";
import { configFromEnv, openStores } from "../../../src/config.js";
import { createEngine } from "../../../src/engine.js";
import { randomIds } from "../../../src/ids.js";
import { fileSide, processorSideIn } from "../../../src/processors/processor-side.js";
import { SANDBOX_PROCESSES } from "../../../src/processors/production-mark.js";
import { createSimulators } from "../../../src/processors/simulator.js";
import { openAccounts, SCENARIOS } from "./scenarios.js";

const dir = mkdtempSync(join(tmpdir(), "cardflow-reconcile-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let err = "";
async function cardflow(...args: string[]) {
  let out = "";
  const io = { out: (t: string) => void (out += t), err: (t: string) => void (err += t), interactive: false };
  const program = new Command("cardflow").exitOverride();
  registerReconcile(program, io);
  await program.parseAsync([...args, "--data-dir", dir], { from: "user" });
  return out;
}

it("dry run, then a pass that appends the processor's recorded capture", async () => {
  const { store, readModels } = await openStores(configFromEnv({ DATA_DIR: dir }));
  const processors = createSimulators({ clock: systemClock, ids: randomIds(), side: fileSide(processorSideIn(dir)) });
  const fault = (at: string, attempt: AttemptEvent) => {
    if (at === "after_call" && attempt.type === "CaptureAttempted") throw new Error("killed after the processor captured");
  };
  const engine = createEngine({ store, readModels, processors, fault });
  await openAccounts(engine);
  const prepared = await SCENARIOS.capture!.prepare(engine);
  await expect(SCENARIOS.capture!.run(engine, prepared)).rejects.toThrow("killed");
  await engine.close();

  // which sandbox processes the store counted (src/processors/production-mark.ts): a dry run appends nothing, and is not counted
  const sandboxes = async () => {
    const opened = await openStores(configFromEnv({ DATA_DIR: dir }));
    const next = await opened.store.reserveIds(SANDBOX_PROCESSES, 0);
    await Promise.all([opened.store.close(), opened.readModels.close()]);
    return next;
  };
  // without --grace, the service's grace: the call (a second old) is younger than the default 30 s,
  // and due with RECONCILE_GRACE_MS=0
  expect(JSON.parse(await cardflow("reconcile", "--dry-run", "--json"))).toMatchObject({ found: 0, waiting: 1, resolved: [], failed: [] });
  process.env.RECONCILE_GRACE_MS = "0";
  try {
    expect(JSON.parse(await cardflow("reconcile", "--dry-run", "--json"))).toMatchObject({ found: 1, waiting: 0, failed: [] });
  } finally {
    delete process.env.RECONCILE_GRACE_MS;
  }
  const before = await sandboxes();
  const dry = JSON.parse(await cardflow("reconcile", "--dry-run", "--json", "--grace", "0"));
  expect(await sandboxes()).toBe(before);
  // the one due attempt is not also counted among the younger ones still open
  expect(dry).toMatchObject({ found: 1, waiting: 0, dry_run: true, resolved: [{ payment_id: prepared.ref.payment_id, open: "CaptureAttempted", processor: "capture", appended: ["PaymentCaptured"] }] });
  const pass = await cardflow("reconcile", "--grace", "0");
  expect(await sandboxes()).toBe(before + 1); // a pass that may append is counted
  expect(pass).toMatch(/^found 1 open attempt\(s\) past the grace period; resolved 1 in \d+ ms/);
  expect(pass).toContain(`${prepared.ref.payment_id}: CaptureAttempted`);
  expect(JSON.parse(await cardflow("reconcile", "--json", "--grace", "0"))).toMatchObject({ found: 0, resolved: [] });
  expect(err).toContain(`cardflow: store: SQLite ${join(dir, "cardflow.sqlite")}\n`); // which store, on stderr

  const reopened = await openStores(configFromEnv({ DATA_DIR: dir }));
  const after = createEngine({ store: reopened.store, readModels: reopened.readModels });
  expect(await after.getPayment(prepared.ref)).toMatchObject({ status: "succeeded", amount_captured: "10.00" });
  // its request id from the store's counter, as the server's reconciler takes it (not a random 16-digit one)
  const captured = (await reopened.store.readStream(`payment-${prepared.ref.payment_id}`)).at(-1)!;
  expect(captured.type).toBe("PaymentCaptured");
  expect(captured.metadata.request_id).toBeLessThan(1_000_000);
  await after.close();
});
