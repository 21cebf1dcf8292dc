// The service as real processes on one SQLite store, delivering to a real HTTP receiver:
// - killed with SIGKILL mid-delivery and restarted: every event delivered at least once, each
//   payment's in order, none skipped;
// - two processes on one store: every event delivered; the duplicates are counted and printed
//   (a lease per endpoint makes them rare: only a lease taken over while a post was in flight).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { verifyWebhook } from "../../src/index.js";
import { startReceiver, until, type Received } from "./receiver.js";
import { openAccounts, startServer, type ServerProcess } from "./server-process.js";

const root = mkdtempSync(join(tmpdir(), "cardflow-webhooks-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const running: ServerProcess[] = [];
afterEach(async () => {
  for (const server of running.splice(0)) await server.kill("SIGKILL");
});

const FAST = { WEBHOOK_LEASE_MS: "1000", WEBHOOK_RETRY_BASE_MS: "50", WEBHOOK_RETRY_MAX_MS: "200" };

async function start(dataDir: string, env: Record<string, string> = FAST) {
  const server = await startServer(dataDir, env);
  running.push(server);
  return server;
}

/** A stored-card payment through the API: created, authorized, captured, refunded (four public events). */
async function payment(server: ServerProcess, key: string, account: string): Promise<string> {
  const post = async (path: string, body: object) => {
    const res = await server.call("POST", path, key, { external_account_id: account, ...body });
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}\n${server.output().slice(-3000)}`);
    return res.body;
  };
  const { payment_id } = await post("/v2/payment/intent", { amount: "10.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus_1" });
  await post("/v2/payment/auth", { payment_id });
  await post("/v2/payment/capture", { payment_id, amount: "10.00" });
  await post("/v2/payment/refund", { payment_id });
  return payment_id;
}

/** Every event of the account's feed, paged. */
async function feed(server: ServerProcess, key: string, account: string): Promise<Array<{ id: string; payment_id: string; sequence: number }>> {
  const events = [];
  let after = "";
  for (;;) {
    const { body } = await server.call("GET", `/v2/events?external_account_id=${account}${after && `&after=${after}`}&limit=500`, key);
    events.push(...body.data);
    after = body.next_cursor;
    if (!body.has_more) return events;
  }
}

/** At least once, none skipped, per payment in order (a redelivery repeats an event, never goes back past it). */
function expectDeliveredInOrder(acknowledged: readonly Received[], expected: Array<{ id: string; payment_id: string; sequence: number }>) {
  expect(new Set(acknowledged.map((r) => r.event.id))).toEqual(new Set(expected.map((e) => e.id)));
  const payments = new Set(expected.map((e) => e.payment_id));
  for (const id of payments) {
    const seen = acknowledged.filter((r) => r.event.payment_id === id).map((r) => r.event.sequence);
    expect(seen, `payment ${id}`).toEqual([...seen].sort((a, b) => a - b));
    expect([...new Set(seen)]).toEqual(expected.filter((e) => e.payment_id === id).map((e) => e.sequence));
  }
  return acknowledged.length - new Set(acknowledged.map((r) => r.event.id)).size;
}

describe("webhook delivery across processes (SQLite store)", () => {
  it("SIGKILL mid-delivery, then a restart: every event delivered at least once, in order per payment, none skipped", async () => {
    const dataDir = join(root, "crash");
    const { acct_crash: key } = await openAccounts(dataDir, ["acct_crash"]);
    const receiver = await startReceiver();
    try {
      let server = await start(dataDir);
      const { body: endpoint } = await server.call("POST", "/v2/webhook_endpoints", key!, { external_account_id: "acct_crash", url: receiver.url() });
      // the receiver is down while the payments are made, then slow: deliveries are in flight when the kill comes
      receiver.answerWith(() => 500);
      const payments = [];
      for (let i = 0; i < 20; i++) payments.push(await payment(server, key!, "acct_crash"));
      receiver.answerWith(async () => (await new Promise((r) => setTimeout(r, 40)), 200));
      await until(() => receiver.acknowledged().length >= 25, 20_000, "some deliveries before the kill");
      await server.kill("SIGKILL");
      const beforeRestart = receiver.acknowledged().length;
      expect(beforeRestart).toBeLessThan(80);

      server = await start(dataDir);
      const expected = await feed(server, key!, "acct_crash");
      expect(expected).toHaveLength(80);
      await until(() => new Set(receiver.acknowledged().map((r) => r.event.id)).size === 80, 30_000, "every event after the restart");
      const duplicates = expectDeliveredInOrder(receiver.acknowledged(), expected);
      console.log(`SIGKILL test: ${beforeRestart} acknowledged before the kill, ${receiver.acknowledged().length} in all, ${duplicates} duplicate(s)`);
      for (const r of receiver.received) expect(verifyWebhook(r.raw, r.headers["cardflow-signature"] as string, endpoint.secret)).toBe(true);
    } finally {
      await receiver.close();
    }
  }, 90_000);

  it("two processes on one store: every event delivered, duplicates counted", async () => {
    const dataDir = join(root, "two");
    const accounts = ["acct_one", "acct_two"];
    const keys = await openAccounts(dataDir, accounts);
    const receiver = await startReceiver();
    try {
      const servers = [await start(dataDir, { ...FAST, WEBHOOK_LEASE_MS: "3000" }), await start(dataDir, { ...FAST, WEBHOOK_LEASE_MS: "3000" })];
      for (const account of accounts) await servers[0]!.call("POST", "/v2/webhook_endpoints", keys[account]!, { external_account_id: account, url: receiver.url(`/${account}`) });
      // both processes take payments of both accounts, concurrently
      await Promise.all(
        servers.flatMap((server) =>
          accounts.map(async (account) => {
            for (let i = 0; i < 10; i++) await payment(server, keys[account]!, account);
          }),
        ),
      );
      let duplicates = 0;
      let total = 0;
      for (const account of accounts) {
        const expected = await feed(servers[1]!, keys[account]!, account);
        expect(expected).toHaveLength(80);
        const mine = () => receiver.acknowledged().filter((r) => r.event.external_account_id === account);
        await until(() => new Set(mine().map((r) => r.event.id)).size === 80, 30_000, `every event of ${account}`);
        duplicates += expectDeliveredInOrder(mine(), expected);
        total += mine().length;
      }
      console.log(`two-process test: ${total} deliveries of 160 events, ${duplicates} duplicate(s)`);
    } finally {
      await receiver.close();
    }
  }, 90_000);
});
