// A blocking auth cut off by the engine's close (a served process's stop: 503 service_stopping, its
// key freed at once), retried with the same Idempotency-Key on the next engine: the retry waits for
// the terminal's outcome as the first try would have, for what is left of the 120 s limit (spec §8)
// since the collection began, not a whole new limit.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { manualClock } from "../../src/clock.js";
import { createEngine } from "../../src/engine.js";
import { sequentialIds } from "../../src/ids.js";
import { createSimulators } from "../../src/processors/simulator.js";
import { createSqliteStore } from "../../src/store/sqlite/index.js";

const dir = mkdtempSync(join(tmpdir(), "cardflow-resumed-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("the retry waits what is left of the limit, then answers USER_TIMEOUT; its answer is the outcome, not the collection's start", async () => {
  const clock = manualClock();
  const ids = sequentialIds();
  // the processor outlives the engines (a real one is another service): the collection goes on
  const sims = createSimulators({ clock, ids, shopperTimeoutMs: 600_000 });
  const path = join(dir, "cardflow.sqlite");
  const open = () => {
    const { events, readModels } = createSqliteStore({ path });
    return createEngine({ clock, ids, processors: sims, store: events, readModels });
  };
  const first = open();
  await first.openAccount({ external_account_id: "acct_r" });
  const { terminal_id } = await first.registerTerminal({ external_account_id: "acct_r", terminal_type: "A_sync" });
  const { payment_id } = await first.createIntent({ external_account_id: "acct_r", amount: "5.00", payment_method_types: "card_present", capture_method: "manual" });
  const input = { external_account_id: "acct_r", payment_id, terminal_id };
  const cut = first.authorize(input, { idempotency_key: "auth-1" }).catch((error: unknown) => error);
  await sims.terminal.untilCollecting(terminal_id);
  await clock.advance(100_000);
  await first.close();
  expect(await cut).toMatchObject({ name: "EngineClosed" });

  const next = open();
  let settled = false;
  const retry = next.authorize(input, { idempotency_key: "auth-1" }).finally(() => (settled = true));
  await clock.advance(19_000);
  expect(settled).toBe(false);
  // 120 s after the collection began, not 120 s after the retry
  await clock.advance(1_000);
  await expect.poll(() => settled).toBe(true);
  expect(await retry).toMatchObject({ status: "requires_payment_method", last_error_code: "USER_TIMEOUT" });
  await next.close();
});
