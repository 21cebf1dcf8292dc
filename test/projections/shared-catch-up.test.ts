// The read side's one catch-up: the projections and the webhook feed (a fold that joins the
// engine's runner) read each batch of new events once and commit it in one read-model transaction
// with every checkpoint; live, the events the subscription delivered are not read again; a second
// feed over the same runner shares the work and hears of it; a feed without a runner has its own.
import { describe, expect, it } from "vitest";
import { PROJECTIONS } from "../../projections/registry.js";
import { createEngine } from "../../src/engine.js";
import { createMemoryReadModels, createMemoryStore } from "../../src/store/memory/index.js";
import type { EventStore, ReadModelStore } from "../../src/store/port.js";
import { createEventFeed, FEED } from "../../src/webhooks/feed.js";
import { createWebhooks } from "../../src/webhooks/index.js";
import type { CreateIntentRequest } from "../../src/inputs.js";

/** The stores, counting the events each readAll returned and each commitBatch's projections. */
function counted() {
  const innerStore = createMemoryStore();
  const innerModels = createMemoryReadModels();
  const reads: number[] = [];
  const commits: string[][] = [];
  const store: EventStore = {
    ...innerStore,
    async readAll(options) {
      const events = await innerStore.readAll(options);
      reads.push(events.length);
      return events;
    },
  };
  const readModels: ReadModelStore = { ...innerModels, commitBatch: (batch) => (commits.push(batch.map((c) => c.projection)), innerModels.commitBatch(batch)) };
  return { store, readModels, reads, commits };
}

const intent = (n: number): CreateIntentRequest => ({ external_account_id: "acct_shared", amount: `${n}.00`, payment_method_types: "card", capture_method: "automatic", payment_method_id: "pm_card_visa", external_customer_id: "cus_1" });

describe("one catch-up for the read models and the webhook feed", () => {
  it("a batch is read once and committed in one transaction with every projection's and the feed's checkpoint", async () => {
    const { store, readModels, reads, commits } = counted();
    const engine = createEngine({ store, readModels });
    const webhooks = createWebhooks({ engine });
    await engine.openAccount({ external_account_id: "acct_shared", processor: "A" });
    for (let n = 1; n <= 5; n++) await engine.authorize({ external_account_id: "acct_shared", payment_id: (await engine.createIntent(intent(n))).payment_id });
    const head = await engine.store.head();
    reads.length = commits.length = 0;

    const indexed = await webhooks.feed.catchUp();
    expect(indexed).toBe(head);
    // one read (short of a batch: the store's end), not one per consumer
    expect(reads).toEqual([head]);
    expect(commits).toHaveLength(1);
    expect(new Set(commits[0])).toEqual(new Set([...PROJECTIONS.map((p) => p.name), FEED.events, FEED.streams, FEED.endpoints]));
    expect(new Set(commits[0]).size).toBe(commits[0]!.length);
    for (const name of [...PROJECTIONS.map((p) => p.name), FEED.events]) expect(await readModels.checkpoint(name)).toBe(head);
    // the read models' waits are answered by that same catch-up: nothing more to read or commit
    await engine.projections.caughtUp();
    expect(commits).toHaveLength(1);
    expect((await webhooks.feed.entries("all", 0, 100)).length).toBe(10); // created + succeeded per payment
    await engine.close();
  });

  it("live: the subscription's events are folded as delivered, not read from the store again; the feed is told", async () => {
    const { store, readModels, reads } = counted();
    const engine = createEngine({ store, readModels, liveProjections: true });
    const webhooks = createWebhooks({ engine });
    await webhooks.feed.start();
    await engine.openAccount({ external_account_id: "acct_shared", processor: "A" });
    await engine.projections.caughtUp();
    reads.length = 0;
    let told = 0;
    webhooks.feed.onIndexed(() => told++);
    const ids: string[] = [];
    for (let n = 1; n <= 20; n++) ids.push((await engine.createIntent(intent(n))).payment_id);
    const head = await engine.store.head();
    // no read waits here (each of them reads the store to its end): the live subscription alone
    while ((await readModels.checkpoint(FEED.events)) < head) await new Promise((resolve) => setTimeout(resolve, 5));
    // every readAll of the runner found nothing new: the events came with the subscription
    expect(reads.filter((n) => n > 0)).toEqual([]);
    expect(told).toBeGreaterThan(0);
    expect(await readModels.checkpoint(FEED.events)).toBe(head);
    const entries = await webhooks.feed.entries("all", 0, 100);
    expect(entries.map((e) => e.event.payment_id)).toEqual(ids);
    await webhooks.feed.stop();
    await engine.close();
  });

  it("two feeds over one engine share the fold (committed once a batch), both are told; a feed of its own folds alike", async () => {
    const { store, readModels, commits } = counted();
    const engine = createEngine({ store, readModels });
    const first = createWebhooks({ engine });
    const second = createWebhooks({ engine });
    await engine.openAccount({ external_account_id: "acct_shared", processor: "A" });
    await engine.createIntent(intent(1));
    commits.length = 0;
    let told = 0;
    second.feed.onIndexed(() => told++);
    const head = await engine.store.head();
    expect(await first.feed.catchUp()).toBe(head);
    expect(commits).toHaveLength(1);
    expect(commits[0]!.filter((name) => name === FEED.events)).toHaveLength(1);
    expect(told).toBe(1);
    expect(await second.feed.catchUp()).toBe(head);
    // without the engine's runner (the CLI's feed): the same entries, in a store of its own
    const alone = createEventFeed({ store: engine.store, readModels: createMemoryReadModels() });
    expect(await alone.catchUp()).toBe(head);
    expect(await alone.entries("all", 0, 100)).toEqual(await first.feed.entries("all", 0, 100));
    await engine.close();
  });
});
