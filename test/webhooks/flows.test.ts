// Every flow of the spec through the engine, delivered to a real HTTP receiver: the expected
// public events per payment, in per-payment order, each signed; verifyWebhook refuses a tampered
// body, another secret and an old timestamp; the feed lists what was delivered.
import { createOutbound } from "../../src/outbound/client.js";
import { afterAll, describe, expect, it } from "vitest";
import type { Engine } from "../../src/engine.js";
import { createWebhooks, verifyWebhook, type Webhooks } from "../../src/index.js";
import { deliveryRecords } from "../../src/webhooks/delivery-records.js";
import { audit, auditAll } from "../../src/audit/audit.js";
import { formatAudit } from "../../src/audit/format.js";
import { runFlows } from "../audit/flows.js";
import { startReceiver, until, type Received } from "./receiver.js";

const receiver = await startReceiver();
afterAll(() => receiver.close());

let webhooks!: Webhooks;
const secrets: Record<string, string> = {};
async function registerEndpoints(engine: Engine) {
  webhooks = createWebhooks({ engine, outbound: createOutbound({ sandbox: true, allowPrivate: true, allowlist: [] }) });
  for (const account of ["acct_a", "acct_b"]) {
    secrets[account] = (await webhooks.createEndpoint({ external_account_id: account, url: receiver.url(`/${account}`) })).secret!;
  }
}
const flows = await runFlows({}, registerEndpoints);
await webhooks.delivery.start();
afterAll(() => webhooks.delivery.stop());

const byPayment = (received: readonly Received[]) => {
  const map = new Map<string, Received["event"][]>();
  for (const r of received) if (r.event.payment_id) map.set(r.event.payment_id, [...(map.get(r.event.payment_id) ?? []), r.event]);
  return map;
};

const created = "payment_intent.created";
const requested = "payment_intent.payment_method_requested";
const authorized = "payment_intent.requires_capture";
const succeeded = "payment_intent.succeeded";
const failed = "payment_intent.payment_failed";
const canceled = "payment_intent.canceled";
const refunded = "payment_intent.refunded";
const saved = "customer_card.saved";
const EXPECTED: Record<string, string[]> = {
  terminal_manual: [created, requested, authorized, succeeded, refunded, refunded],
  terminal_sync_saves_card: [created, requested, succeeded, saved],
  capture_requested: [created, requested, "payment_intent.capture_requested", succeeded],
  retry_then_cancel: [created, requested, failed, requested, failed, requested, authorized, canceled],
  shopper_timeout: [created, requested, failed],
  reader_manual: [created, requested, authorized, succeeded],
  card_form_automatic: [created, requested, authorized, succeeded, saved],
  stored_card_automatic: [created, succeeded],
  stored_card_manual_canceled: [created, authorized, canceled],
  stored_card_declined: [created, failed],
  canceled_at_once: [created, canceled],
};

describe("webhooks over every flow", () => {
  it("delivers every public event of both accounts once, in order per payment, each signed", async () => {
    const feeds = { acct_a: await webhooks.feed.page("acct_a", { limit: 1000 }), acct_b: await webhooks.feed.page("acct_b", { limit: 1000 }) };
    await until(() => receiver.received.length >= feeds.acct_a.data.length + feeds.acct_b.data.length, 10_000, "every event delivered");
    const delivered = byPayment(receiver.received);
    expect(Object.keys(EXPECTED).sort()).toEqual(Object.keys(flows.payments).sort());
    for (const [flow, types] of Object.entries(EXPECTED)) {
      const events = delivered.get(flows.payments[flow]!)!;
      expect(events.map((e) => e.type), flow).toEqual(types);
      expect(events.map((e) => e.sequence), flow).toEqual(types.map((_, i) => i + 1));
    }
    // the terminals too, each to its own account's endpoint; nothing twice
    for (const [account, feed] of Object.entries(feeds)) {
      const got = receiver.received.filter((r) => r.event.external_account_id === account);
      expect(got.every((r) => r.headers["content-type"] === "application/json")).toBe(true);
      expect(got.map((r) => r.event.id).sort()).toEqual(feed.data.map((e) => e.id).sort());
      expect(new Set(got.map((r) => r.event.id)).size).toBe(got.length);
      expect(feed.has_more).toBe(false);
    }
    expect(receiver.received.filter((r) => r.event.type === "terminal.registered")).toHaveLength(3);
    // each payment event carries the v2 status read as it stood right after
    const last = delivered.get(flows.payments.terminal_manual!)!.at(-1)!;
    expect(last.data.object).toEqual(await flows.engine.getPayment({ external_account_id: "acct_a", payment_id: flows.payments.terminal_manual! }));
    expect(delivered.get(flows.payments.terminal_manual!)![3]!.data.object).toMatchObject({ status: "succeeded", amount_captured: "20.00", amount_refunded: "0.00" });
  });

  it("signs each delivery; a tampered body, another secret or an old timestamp fail verifyWebhook", async () => {
    const now = flows.clock.now();
    for (const r of receiver.received) {
      const path = r.event.external_account_id;
      expect(verifyWebhook(r.raw, r.headers["cardflow-signature"] as string, secrets[path]!, { now }), r.raw).toBe(true);
    }
    const { raw, headers } = receiver.received[0]!;
    const header = headers["cardflow-signature"] as string;
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verifyWebhook(raw.replace('"sequence":1', '"sequence":2'), header, secrets.acct_a!, { now })).toBe(false);
    expect(verifyWebhook(raw, header, secrets.acct_b!, { now })).toBe(false);
    expect(verifyWebhook(raw, header, secrets.acct_a!, { now: now + 301_000 })).toBe(false);
    expect(verifyWebhook(raw, header, secrets.acct_a!, { now: now + 299_000 })).toBe(true);
    expect(verifyWebhook(raw, header.replace(/t=\d+/, (t) => `t=${Number(t.slice(2)) + 1}`), secrets.acct_a!, { now })).toBe(false);
    expect(verifyWebhook(raw, undefined, secrets.acct_a!, { now })).toBe(false);
  });

  it("keeps each delivery as a row of delivery state, not as events: the payment's audit timeline shows them, and the audit finds nothing", async () => {
    const { engine, payments } = flows;
    const rows = () => deliveryRecords(engine.readModels).ofPayment(payments.terminal_manual!);
    await until(async () => (await rows()).filter((r) => r.delivered).length === 6, 5_000, "deliveries of the payment");
    const deliveries = (await rows()).sort((x, y) => x.sequence - y.sequence);
    expect(deliveries.map((d) => [d.sequence, d.event_type, d.attempts, d.delivered, d.status_code])).toEqual(EXPECTED.terminal_manual!.map((type, i) => [i + 1, type, 1, true, 200]));
    // nothing appended for them: no delivery stream grows
    expect((await engine.store.readAll()).filter((e) => e.stream.startsWith("webhook_deliveries-") || e.type === "WebhookDeliveryAttempted")).toEqual([]);
    const report = await auditAll({ store: engine.store, readModels: engine.readModels });
    expect(report.findings).toEqual([]);
    // `cardflow audit <payment>` prints them under the payment's timeline
    const text = formatAudit(await audit({ store: engine.store, readModels: engine.readModels }, payments.terminal_manual!));
    expect(text).toContain("webhook deliveries: 6 (each with its attempts so far and its last result)");
    expect(text).toMatch(/we_\S+\s+#6 payment_intent\.refunded\s+1\s+delivered \(200\)/);
    expect(text).toContain("read models: equal to a fresh replay");
  });
});
