// A server killed while its processor call is on the way, and another server on the same store
// that keeps running: the survivor's reconciler closes the attempt the kill left open (the call
// never reached the processor: abandoned), within its grace and a pass, without the killed
// process coming back. The payment was created and authorized through the survivor, so its
// state was in the survivor's memory from before the attempt (SQLite; PostgreSQL).
import { afterAll, describe, expect, it } from "vitest";
import { client, freshStores, merchantKey, startServer, storedEvents, type ServerProcess } from "./servers.js";

const stores = await freshStores("reconcile-killed");
const servers: ServerProcess[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
});

describe.each(["sqlite", "postgres"] as const)("an attempt left open by a killed process (%s)", (kind) => {
  it("is closed by the other process's reconciler, and the payment takes the command again", { timeout: 90_000 }, async () => {
    const store = stores[kind]();
    const account = "acct_killed";
    const key = await merchantKey(store, account);
    const env = { SIM_PROCESSOR_LATENCY_MS: "3000", RECONCILE_GRACE_MS: "4000", RECONCILE_INTERVAL_MS: "250" };
    const [doomed, survivor] = [await startServer(store, env), await startServer(store, env)];
    servers.push(doomed, survivor);
    const http = client(key);
    const created = await http.post(survivor.url, "/v2/payment/intent", { external_account_id: account, amount: "10.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus_k" });
    const payment_id: string = created.body.payment_id;
    expect((await http.post(survivor.url, "/v2/payment/auth", { external_account_id: account, payment_id })).body.status).toBe("requires_capture");

    // the capture's call is on its way (3 s) when its process is killed
    const capture = http.post(doomed.url, "/v2/payment/capture", { external_account_id: account, payment_id, amount: "10.00" });
    for (let i = 0; i < 100 && !(await storedEvents(store)).some((e) => e.type === "CaptureAttempted"); i++) await new Promise((r) => setTimeout(r, 50));
    doomed.child.kill("SIGKILL");
    expect((await capture).status).toBe(0);

    // the survivor abandons it (never received) after the grace, and a capture goes through it
    const deadline = Date.now() + 30_000;
    const types = async () => (await storedEvents(store)).filter((e) => e.stream === `payment-${payment_id}`).map((e) => e.type);
    while (Date.now() < deadline && (await types()).at(-1) === "CaptureAttempted") await new Promise((r) => setTimeout(r, 250));
    expect((await types()).slice(-2)).toEqual(["CaptureAttempted", "AttemptAbandoned"]);
    const again = await http.post(survivor.url, "/v2/payment/capture", { external_account_id: account, payment_id, amount: "10.00" });
    expect([again.status, again.body.status]).toEqual([200, "succeeded"]);
  });
});
