// The sandbox behind a load balancer without sticky sessions: two `npm start` processes on one
// store (SQLite file; PostgreSQL) and one DATA_DIR (their host's), every step of a flow sent to the other process
// than the step before. The simulated processors are one processor for both (their side in
// DATA_DIR/simulators.sqlite): a card presented through one process completes the collection the
// other started, a synchronous terminal's blocking auth answers when the card is presented
// through the other process (not at its deadline), a card read by one is processed by the other
// with its own outcome, and a card saved through one is charged through the other.
import { describe, expect, it } from "vitest";
import { createApiKeys } from "../../src/api-keys.js";
import { configFromEnv, openStores } from "../../src/config.js";
import { createEngine } from "../../src/engine.js";
import { client, freshStores, type ServerProcess, startServer, type StoreEnv } from "./servers.js";

const stores = await freshStores("sandbox");

/** Opens an account of processor A and one of processor B and issues a key for each. */
async function keys(store: StoreEnv): Promise<{ A: string; B: string }> {
  const { store: events, readModels } = await openStores(configFromEnv({ DATA_DIR: "", DATABASE_URL: "", ...store }));
  const engine = createEngine({ store: events, readModels });
  try {
    await engine.openAccount({ external_account_id: "acct_a", processor: "A" });
    await engine.openAccount({ external_account_id: "acct_b", processor: "B" });
    const apiKeys = createApiKeys(engine);
    return { A: (await apiKeys.issue("acct_a")).key, B: (await apiKeys.issue("acct_b")).key };
  } finally {
    await engine.close();
  }
}

describe.each(["sqlite", "postgres"] as const)("two server processes on one %s store, one sandbox processor", (kind) => {
  it("each step of a flow through the other process: terminals, blocking auth, reader, card on file", { timeout: 120_000 }, async () => {
    const store = stores[kind]();
    const key = await keys(store);
    // the blocking auth's deadline is far beyond this test's timeout: an answer proves it did not wait for it
    const env = { SYNC_AUTH_TIMEOUT_MS: "600000" };
    const servers: ServerProcess[] = await Promise.all([0, 1].map(() => startServer(store, env)));
    let turn = 0;
    /** POSTs to the process after the one the previous step went to; answers the body of a 200. */
    const step = (account: "A" | "B") => async (path: string, body: object) => {
      const answer = await client(key[account]).post(servers[turn++ % 2]!.url, path, body);
      expect(answer.status, `${path} ${JSON.stringify(answer.body)}`).toBe(200);
      return answer.body;
    };
    /** The status read, through the next process. */
    const read = async (account: "A" | "B", paymentId: string, external: string) => {
      const res = await fetch(`${servers[turn++ % 2]!.url}/v2/payment/intent/${paymentId}?external_account_id=${external}`, { headers: { authorization: `Bearer ${key[account]}` } });
      expect(res.status).toBe(200);
      return res.json();
    };
    const a = step("A");
    const b = step("B");
    const acctA = { external_account_id: "acct_a" };
    try {
      // processor A, asynchronous terminal: auth through one process, card presented through the other
      const asyncTerminal = (await a("/v2/hardware", { ...acctA, terminal_type: "A_async" })).terminal_id;
      const saving = { ...acctA, amount: "20.00", payment_method_types: "card_present", capture_method: "manual", allow_saving_card: true, external_customer_id: "cus_side" };
      const first = (await a("/v2/payment/intent", { ...saving, allow_saving_card: false })).payment_id;
      expect((await a("/v2/payment/auth", { ...acctA, payment_id: first, terminal_id: asyncTerminal })).status).toBe("payment_method_requested");
      const presented = await a("/sim/terminal/present-card", { ...acctA, terminal_id: asyncTerminal, card_number: "5555555555554444" });
      expect(presented.status).toBe("requires_capture");
      expect((await read("A", first, "acct_a")).status).toBe("requires_capture");
      expect((await a("/v2/payment/capture", { ...acctA, payment_id: first, amount: "20.00" })).status).toBe("succeeded");

      // processor A, synchronous terminal, automatic capture and saving: the blocking auth through
      // one process answers once the card presented through the other is captured and saved
      const syncTerminal = (await a("/v2/hardware", { ...acctA, terminal_type: "A_sync" })).terminal_id;
      const blocking = (await a("/v2/payment/intent", { ...saving, amount: "30.00", capture_method: "automatic" })).payment_id;
      const [blocker, presenter] = [servers[turn % 2]!, servers[(turn + 1) % 2]!];
      const answer = client(key.A).post(blocker.url, "/v2/payment/auth", { ...acctA, payment_id: blocking, terminal_id: syncTerminal });
      for (let collecting = false; !collecting; ) {
        const present = await client(key.A).post(presenter.url, "/sim/terminal/present-card", { ...acctA, terminal_id: syncTerminal, card_number: "4242424242424242" });
        collecting = present.status === 200; // 409 terminal_idle until the auth has reached the terminal
        if (!collecting) expect(present.body.code).toBe("terminal_idle");
      }
      const blocked = await answer;
      expect(blocked.status).toBe(200);
      expect(blocked.body).toMatchObject({ payment_id: blocking, status: "succeeded", amount_captured: "30.00", payment: { payment_method_id: expect.stringMatching(/^pm_/) } });

      // processor B reader: a declining card read through one process is processed through the other
      const acctB = { external_account_id: "acct_b" };
      const reader = (await b("/v2/hardware", { ...acctB, terminal_type: "B_reader" })).terminal_id;
      const onReader = { ...acctB, amount: "15.00", payment_method_types: "card_present", capture_method: "manual", allow_saving_card: true, external_customer_id: "cus_side" };
      const declined = await b("/v2/payment/intent", onReader);
      await b("/v2/sdk/payment-method", { client_secret: declined.client_secret, terminal_id: reader, card_number: "4000000000000002" });
      expect((await b("/v2/sdk/process-payment", { client_secret: declined.client_secret })).status).toBe("error");
      expect(await read("B", declined.payment_id, "acct_b")).toMatchObject({ status: "error", last_error: "Your card was declined" });

      // and an approved one is captured, saved and charged again, each step through the other process
      const approved = await b("/v2/payment/intent", onReader);
      await b("/v2/sdk/payment-method", { client_secret: approved.client_secret, terminal_id: reader, card_number: "5555555555554444" });
      expect((await b("/v2/sdk/process-payment", { client_secret: approved.client_secret })).status).toBe("requires_capture");
      expect((await b("/v2/payment/capture", { ...acctB, payment_id: approved.payment_id, amount: "15.00" })).status).toBe("succeeded");
      const saved = await b("/v1/customer/card", { ...acctB, payment_id: approved.payment_id, external_customer_id: "cus_side" });
      expect(saved).toMatchObject({ external_customer_id: "cus_side", brand: "mastercard", last_4: "4444" });
      const charge = (await b("/v2/payment/intent", { ...acctB, amount: "7.00", payment_method_types: "card", capture_method: "manual", payment_method_id: saved.payment_method_id, external_customer_id: "cus_side" })).payment_id;
      expect(await b("/v2/payment/auth", { ...acctB, payment_id: charge })).toMatchObject({ status: "requires_capture", payment: { brand: "mastercard", last_4: "4444" } });
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
    }
  });
});
