// Row 11 — webhook delivery latency: from an append acknowledged (a payment intent created through
// the engine on the durable SQLite store) to the signed POST arriving at a receiver on loopback,
// p50 and p99, with payments created at a steady pace by several clients. The ceiling, measured in
// the same run, is a bare signed POST of the same body to the same receiver: what delivery adds
// is the ratio. The path: the feed's subscription indexes the event, the endpoint's worker queues
// it (a state write), posts it, writes its state and records the attempt as an event.
//   node --expose-gc --import tsx scripts/bench/webhooks.ts [--quick]
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createEngine } from "../../src/engine.js";
import { createSqliteStore } from "../../src/store/sqlite/index.js";
import { createWebhooks, signatureHeader } from "../../src/index.js";
import { createOutbound } from "../../src/outbound/client.js";
import { postWith } from "../../src/webhooks/transport.js";
import { ACCOUNT, CUSTOMER, openBenchAccount } from "./flows.js";
import { emit, percentile, quick } from "./lib.js";

const PAYMENTS = quick ? 50 : 3_000;
const CLIENTS = 4;
/** Each client creates one payment, then waits this long: a steady load, not a flood. */
const PACE_MS = 20;

const arrived = new Map<string, number>();
const receiver = createServer((req, res) => {
  let body = "";
  req.on("data", (d) => (body += d));
  req.on("end", () => {
    const event = JSON.parse(body) as { type: string; payment_id: string };
    if (event.type === "payment_intent.created") arrived.set(event.payment_id, performance.now());
    res.writeHead(200).end();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;

const work = mkdtempSync(join(tmpdir(), "cardflow-webhooks-bench-"));
const { events, readModels } = createSqliteStore({ path: join(work, "events.db") });
const engine = createEngine({ store: events, readModels });
const card = await openBenchAccount(engine);
// the sandbox with WEBHOOK_ALLOW_PRIVATE=1: the receiver is on loopback
const outbound = createOutbound({ sandbox: true, allowPrivate: true, allowlist: [] });
const webhooks = createWebhooks({ engine, outbound });
const { secret } = await webhooks.createEndpoint({ external_account_id: ACCOUNT, url, event_types: ["payment_intent.created"] });
await webhooks.delivery.start();

const appended = new Map<string, number>();
let made = 0;
await Promise.all(
  Array.from({ length: CLIENTS }, async () => {
    while (made < PAYMENTS) {
      made++;
      const { payment_id } = await engine.createIntent({ external_account_id: ACCOUNT, amount: "10.00", payment_method_types: "card", capture_method: "manual", payment_method_id: card, external_customer_id: CUSTOMER });
      appended.set(payment_id, performance.now());
      await new Promise((r) => setTimeout(r, PACE_MS));
    }
  }),
);
while (arrived.size < appended.size) await new Promise((r) => setTimeout(r, 10));

// the ceiling: a bare signed POST of a feed-sized body to the same receiver
const body = JSON.stringify((await webhooks.feed.page(ACCOUNT, { limit: 1 })).data[0]);
const bare: number[] = [];
for (let i = 0; i < (quick ? 20 : 1_000); i++) {
  const start = performance.now();
  await postWith(outbound)(url, body, { "Cardflow-Signature": signatureHeader(secret!, body, Date.now()) }, { timeoutMs: 10_000 });
  bare.push(performance.now() - start);
}
await webhooks.delivery.stop();
await engine.close();
receiver.close();
rmSync(work, { recursive: true, force: true });

const latencies = [...appended].map(([id, at]) => arrived.get(id)! - at);
const ms = (x: number) => `${x.toFixed(1)} ms`;
emit([
  {
    row: "11",
    figure: `webhook delivery latency, append acknowledged → receiver, ${PAYMENTS.toLocaleString("en-US")} payments by ${CLIENTS} paced clients (SQLite store, loopback receiver)`,
    value: `p50 ${ms(percentile(latencies, 50))}, p99 ${ms(percentile(latencies, 99))}`,
    ceiling: `bare signed POST p50 ${ms(percentile(bare, 50))}, p99 ${ms(percentile(bare, 99))}`,
    ratio: `${(percentile(latencies, 50) / percentile(bare, 50)).toFixed(1)}× at p50`,
    target: "—",
    met: null,
    command: "node --expose-gc --import tsx scripts/bench/webhooks.ts",
    notes: [`max ${ms(Math.max(...latencies))}; each client waits ${PACE_MS} ms between payments; the receiver answers 200 at once`],
  },
]);
