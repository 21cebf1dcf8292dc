// SANDBOX=off (`npm start` as a real process): the simulators' test helpers (/sim/*) are not
// served and test amounts select no scripted outcome; with the sandbox on (the default) they do.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { amountFailingWith, testAmountIn } from "../../src/processors/test-cards.js";
import { client, merchantKey, startServer } from "../multiprocess/servers.js";

const dir = mkdtempSync(join(tmpdir(), "cardflow-sandbox-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("SANDBOX switch", () => {
  it("off: no /sim/* endpoints and a declining test amount is approved; on: both as documented", { timeout: 240_000 }, async () => {
    const declining = testAmountIn(amountFailingWith("ONLINE_DECLINED"), "USD");
    const outcomes: Record<string, { sim: number; auth: string }> = {};
    for (const sandbox of ["on", "off"]) {
      const store = { DATA_DIR: mkdtempSync(join(dir, sandbox)) };
      const key = await merchantKey(store, "acct_sb");
      const server = await startServer(store, { SANDBOX: sandbox });
      try {
        const http = client(key);
        const sim = await http.post(server.url, "/sim/terminal/present-card", { terminal_id: "tmr_x" });
        const intent = { external_account_id: "acct_sb", amount: declining, payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "c" };
        const { body } = await http.post(server.url, "/v2/payment/intent", intent);
        const auth = await http.post(server.url, "/v2/payment/auth", { external_account_id: "acct_sb", payment_id: body.payment_id });
        outcomes[sandbox] = { sim: sim.status, auth: auth.body.status };
      } finally {
        expect(await server.stop()).toBe(0);
      }
    }
    expect(outcomes.on!.sim).not.toBe(404);
    expect(outcomes.on!.auth).not.toBe("requires_capture");
    expect(outcomes.off).toEqual({ sim: 404, auth: "requires_capture" });
  });
});
