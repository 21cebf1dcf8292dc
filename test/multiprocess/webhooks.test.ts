// Webhooks behind a load balancer: two `npm start` processes on one store (SQLite file;
// PostgreSQL), one endpoint, payments created through either process. One process holds the
// endpoint's lease and delivers; the other process's payments must reach it when they are indexed,
// even when the other process indexed them first (its own catch-up then finds nothing to fold).
// The lease is ten minutes here, so its renewal tick (a third of it) cannot be what delivers them.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { client, freshStores, merchantKey, type ServerProcess, startServer } from "./servers.js";

const stores = await freshStores("webhooks");

/** A receiver answering 200, resolving each payment's `payment_intent.created` when it arrives. */
async function receiver() {
  const arrived = new Map<string, () => void>();
  const waiting = new Map<string, Promise<void>>();
  const created = (paymentId: string) => {
    if (!waiting.has(paymentId)) waiting.set(paymentId, new Promise<void>((resolve) => arrived.set(paymentId, resolve)));
    return waiting.get(paymentId)!;
  };
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (d: Buffer) => (body += d.toString())).on("end", () => {
      const event = JSON.parse(body) as { type: string; payment_id: string };
      if (event.type === "payment_intent.created") {
        void created(event.payment_id); // its resolver exists from here on
        arrived.get(event.payment_id)!();
      }
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, created, close: () => server.close() };
}

describe.each(["sqlite", "postgres"] as const)("two server processes on one %s store, one webhook endpoint", (kind) => {
  it("delivers the payments created through either process, whichever holds the lease", { timeout: 120_000 }, async () => {
    const store = stores[kind]();
    const key = await merchantKey(store, "acct_w");
    const hooks = await receiver();
    const servers: ServerProcess[] = await Promise.all([0, 1].map(() => startServer(store, { WEBHOOK_LEASE_MS: "600000" })));
    try {
      const api = client(key);
      const endpoint = await api.post(servers[0]!.url, "/v2/webhook_endpoints", { external_account_id: "acct_w", url: hooks.url });
      expect(endpoint.status).toBe(200);
      for (let i = 0; i < 6; i++) {
        const created = await api.post(servers[i % 2]!.url, "/v2/payment/intent", {
          external_account_id: "acct_w",
          amount: "5.00",
          payment_method_types: "card",
          capture_method: "manual",
          payment_method_id: "pm_card_visa",
          external_customer_id: "cus_w",
        });
        expect(created.status).toBe(200);
        // each payment's event arrives before the next payment is made (the test's timeout bounds the wait)
        await hooks.created((created.body as { payment_id: string }).payment_id);
      }
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
      hooks.close();
    }
  });
});
