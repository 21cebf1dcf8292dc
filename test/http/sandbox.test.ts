// Modes (`npm start` as a real process): the sandbox is the default outside NODE_ENV=production,
// and NODE_ENV=production runs it only with SANDBOX=on; the start log says which mode runs; the
// sandbox serves the simulators' test helpers (/sim/*) and its test amounts select their scripted
// outcome. (Production without adapters refusing to start: test/processors/production.test.ts.)
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { amountFailingWith, testAmountIn } from "../../src/processors/test-cards.js";
import { client, merchantKey, startServer } from "../multiprocess/servers.js";

const dir = mkdtempSync(join(tmpdir(), "cardflow-sandbox-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the sandbox", () => {
  it.each([
    ["by default", {}],
    ["with NODE_ENV=production and SANDBOX=on", { NODE_ENV: "production", SANDBOX: "on" }],
  ])("runs %s: says so at start, serves /sim/*, a declining test amount is declined", { timeout: 120_000 }, async (_, env: Record<string, string>) => {
    const declining = testAmountIn(amountFailingWith("ONLINE_DECLINED"), "USD");
    const store = { DATA_DIR: mkdtempSync(join(dir, "sandbox-")) };
    const key = await merchantKey(store, "acct_sb");
    const server = await startServer(store, { NODE_ENV: "", SANDBOX: "", ...env });
    try {
      expect(await server.outputContaining("mode: sandbox)")).toContain("mode: sandbox)");
      const http = client(key);
      const sim = await http.post(server.url, "/sim/terminal/present-card", { external_account_id: "acct_sb", terminal_id: "tmr_x" });
      expect(sim.status).toBe(404);
      expect(sim.body.code).not.toBe("route_not_found"); // the route exists: the terminal does not
      const intent = { external_account_id: "acct_sb", amount: declining, payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "c" };
      const { body } = await http.post(server.url, "/v2/payment/intent", intent);
      const auth = await http.post(server.url, "/v2/payment/auth", { external_account_id: "acct_sb", payment_id: body.payment_id });
      expect(auth.body.status).not.toBe("requires_capture");
      expect(auth.body.last_error_code).toBe("ONLINE_DECLINED");
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });
});
