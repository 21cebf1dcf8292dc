// A SQLite restore as docs/OPERATIONS.md writes it: the events' file copied with SQLite's online
// backup while the service runs, later put back in place while it is stopped, the read models'
// file left as it was. Those read models then describe events the restored log no longer holds
// (and positions new events take again): they are dropped and rebuilt at start, and the webhook
// delivery state past the restored head is treated as lost. Before, the list kept the payments made
// after the backup (404 when read) and missed the new ones, and so did the event feed.
import Database from "better-sqlite3";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startReceiver, until } from "../webhooks/receiver.js";
import { client, merchantKey, startServer } from "./servers.js";

const root = mkdtempSync(join(tmpdir(), "cardflow-restore-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("restoring the events from a backup older than the read models", () => {
  it("the read models are rebuilt from the restored events: lists and the feed show what the log holds", { timeout: 120_000 }, async () => {
    const store = { DATA_DIR: join(root, "data") };
    const events = join(store.DATA_DIR, "cardflow.sqlite");
    const backup = join(root, "cardflow-backup.sqlite");
    const account = "acct_restore";
    const key = await merchantKey(store, account);
    const http = client(key);
    const intent = (url: string) => http.post(url, "/v2/payment/intent", { external_account_id: account, amount: "5.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "c" }).then((a) => a.body.payment_id as string);
    const get = async (url: string, path: string) => (await fetch(url + path, { headers: { authorization: `Bearer ${key}` } })).json() as Promise<{ data: { payment_id: string }[] }>;
    const listed = async (url: string) => (await get(url, `/v2/payments?external_account_id=${account}&limit=100`)).data.map((p: { payment_id: string }) => p.payment_id).sort();
    const inFeed = async (url: string) => new Set((await get(url, `/v2/events?external_account_id=${account}&limit=100`)).data.map((e: { payment_id: string }) => e.payment_id));

    const hooks = await startReceiver();
    const posted = (paymentId: string) => hooks.acknowledged().some((r) => r.event.payment_id === paymentId);
    let server = await startServer(store);
    let kept: string;
    try {
      expect((await http.post(server.url, "/v2/webhook_endpoints", { external_account_id: account, url: hooks.url() })).status).toBe(200);
      kept = await intent(server.url);
      const db = new Database(events, { readonly: true });
      await db.backup(backup); // while it runs: SQLite's online backup
      db.close();
      // after the backup: lost by the restore, their webhooks posted (the delivery state moves past the backup's head)
      const lost = [await intent(server.url), await intent(server.url)];
      await until(() => lost.every(posted), 30_000, "the webhooks of the payments the restore loses");
    } finally {
      expect(await server.stop()).toBe(0);
    }
    for (const suffix of ["-wal", "-shm"]) rmSync(events + suffix, { force: true });
    copyFileSync(backup, events);

    server = await startServer(store);
    try {
      const added = await intent(server.url);
      expect(await listed(server.url)).toEqual([kept, added].sort());
      const feed = await inFeed(server.url);
      expect(feed.has(added)).toBe(true);
      expect([...feed].sort()).toEqual([kept, added].sort());
      await until(() => posted(added), 30_000, "the webhook of the payment made after the restore");
    } finally {
      expect(await server.stop()).toBe(0);
      await hooks.close();
    }
  });
});
