// The data directory `npm start` creates is 0700 and every file in it 0600 (the events' and read
// models' SQLite files with their -wal and -shm, the sandbox processor's side, the webhook signing
// key): nothing another local user can read. And a file an earlier version left 0644 is tightened.
import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { client, merchantKey, startServer } from "../multiprocess/servers.js";

const root = mkdtempSync(join(tmpdir(), "cardflow-files-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);

describe("data directory permissions", () => {
  it("created 0700, its files 0600, while the server runs and after", { timeout: 120_000 }, async () => {
    const store = { DATA_DIR: join(root, "new", "data") };
    const server = await startServer(store);
    try {
      const key = await merchantKey(store, "acct_files");
      const http = client(key);
      const intent = await http.post(server.url, "/v2/payment/intent", { external_account_id: "acct_files", amount: "5.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "c" });
      expect((await http.post(server.url, "/v2/payment/auth", { external_account_id: "acct_files", payment_id: intent.body.payment_id })).body.status).toBe("requires_capture");
      const files = readdirSync(store.DATA_DIR);
      expect(files).toEqual(expect.arrayContaining(["cardflow.sqlite", "cardflow.sqlite-wal", "cardflow.read-models.sqlite", "simulators.sqlite", "webhook-signing.key"]));
      expect(mode(store.DATA_DIR)).toBe("700");
      for (const file of files) expect(`${file} ${mode(join(store.DATA_DIR, file))}`).toBe(`${file} 600`);
    } finally {
      expect(await server.stop()).toBe(0);
    }
    // a store file another version left readable, or the signing key after a copy that lost its mode, is tightened when opened again
    chmodSync(join(store.DATA_DIR, "cardflow.sqlite"), 0o644);
    chmodSync(join(store.DATA_DIR, "webhook-signing.key"), 0o644);
    const again = await startServer(store);
    try {
      expect(mode(join(store.DATA_DIR, "cardflow.sqlite"))).toBe("600");
      expect(mode(join(store.DATA_DIR, "webhook-signing.key"))).toBe("600");
    } finally {
      expect(await again.stop()).toBe(0);
    }
  });
});
