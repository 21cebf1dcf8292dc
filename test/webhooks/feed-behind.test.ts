// The event feed's page waits for the read models like every list (README: "past a few seconds
// they answer 503 read_model_behind with Retry-After"): bounded, never an unbounded queue behind a
// projector that cannot commit, and never a page that misses an acknowledged write.
import { expect, it } from "vitest";
import { ReadModelBehind } from "../../projections/behind.js";
import { createProjectionRunner } from "../../projections/runner.js";
import { createEngine } from "../../src/engine.js";
import { createMemoryStore } from "../../src/store/memory/index.js";
import { createEventFeed } from "../../src/webhooks/feed.js";
import { createWebhooks } from "../../src/webhooks/index.js";
import { lockableReadModels } from "../support/lockable-read-models.js";

it("a page while the read models cannot commit is 503 read_model_behind after the bound; once they can, it holds the write", async () => {
  const store = createMemoryStore();
  const { readModels, block, unblock } = lockableReadModels();
  const runner = createProjectionRunner({ store, readModels, projections: [], waitMs: 150 });
  const feed = createEventFeed({ store, readModels, runner });
  const engine = createEngine({ store });
  await engine.openAccount({ external_account_id: "acct_behind" });
  expect((await feed.page("acct_behind", {})).data).toEqual([]);

  block();
  const { payment_id } = await engine.createIntent({ external_account_id: "acct_behind", amount: "5.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus_1" });
  const started = Date.now();
  const error = await feed.page("acct_behind", {}).catch((e: unknown) => e);
  expect(Date.now() - started).toBeGreaterThanOrEqual(140);
  expect(error).toBeInstanceOf(ReadModelBehind);
  expect(error).toMatchObject({ status: 503, code: "read_model_behind", retryAfterSeconds: 1 });

  unblock();
  expect((await feed.page("acct_behind", {})).data).toEqual([expect.objectContaining({ type: "payment_intent.created", payment_id })]);
  await engine.close();
});

it("the webhook endpoints' reads wait for the feed as every list does: bounded, 503 read_model_behind, not queued behind a catch-up that cannot commit", { timeout: 20_000 }, async () => {
  const store = createMemoryStore();
  const { readModels, block, unblock } = lockableReadModels();
  const engine = createEngine({ store, readModels });
  const webhooks = createWebhooks({ engine });
  await engine.openAccount({ external_account_id: "acct_behind" });
  expect(await webhooks.listEndpoints("acct_behind")).toEqual([]);

  block();
  await engine.createIntent({ external_account_id: "acct_behind", amount: "5.00", payment_method_types: "card", capture_method: "manual" });
  const started = Date.now();
  const error = await webhooks.listEndpoints("acct_behind").catch((e: unknown) => e);
  // the engine's bound (3 s), not the projector's lock
  expect(Date.now() - started).toBeLessThan(10_000);
  expect(error).toMatchObject({ status: 503, code: "read_model_behind" });

  unblock();
  expect(await webhooks.listEndpoints("acct_behind")).toEqual([]);
  await engine.close();
});

it("the feed starts once: the delivery and every event stream share that start, a later one runs no catch-up of its own", async () => {
  const store = createMemoryStore();
  const { readModels } = lockableReadModels();
  const runner = createProjectionRunner({ store, readModels, projections: [] });
  let catchUps = 0;
  const counted = { ...runner, catchUp: () => (catchUps++, runner.catchUp()) };
  const feed = createEventFeed({ store, readModels, runner: counted });
  await Promise.all([feed.start(), feed.start()]);
  await feed.start();
  expect(catchUps).toBe(1);
  // still indexing: an event appended after the start is in the feed
  const engine = createEngine({ store, readModels });
  await engine.openAccount({ external_account_id: "acct_once" });
  const { payment_id } = await engine.createIntent({ external_account_id: "acct_once", amount: "5.00", payment_method_types: "card", capture_method: "manual" });
  await expect.poll(async () => (await feed.page("acct_once", {})).data.map((e) => e.payment_id)).toEqual([payment_id]);
  await feed.stop();
  await engine.close();
});
