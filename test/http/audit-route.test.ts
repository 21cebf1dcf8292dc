// The audit route on a history the machine cannot fold: what it exists to report. An event removed
// or unreadable in the store is a broken chain with its findings (as `cardflow audit` says), not a
// 500 from the payment's state read on the way; another account still gets 404.
import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { createApiKeys } from "../../src/api-keys.js";
import { createServer } from "../../src/http/server.js";
import { createSqliteStore } from "../../src/store/sqlite/index.js";
import { runFlows } from "../audit/flows.js";

const dir = mkdtempSync(join(tmpdir(), "cardflow-audit-route-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it.each([
  ["an event removed", "DELETE FROM events WHERE stream = ? AND revision = 3", "removed"],
  ["an event whose data is not JSON", "UPDATE events SET data = '{not json' WHERE stream = ? AND revision = 3", "unreadable"],
])("%s: 200, chain broken, the finding named, no step allowed", async (name, tamper, kind) => {
  const path = join(dir, `${kind}.sqlite`);
  const { events, readModels } = createSqliteStore({ path });
  const { engine, payments } = await runFlows({ store: events, readModels });
  const paymentId = payments.terminal_manual!;
  const app = createServer({ engine });
  const keys = createApiKeys(engine);
  const own = await keys.issue("acct_a", "test");
  const other = await keys.issue("acct_b", "test");
  // the read models as the service keeps them; the events tampered with afterwards, by hand
  await engine.projections.caughtUp();
  const db = new Database(path);
  expect(db.prepare(tamper).run(`payment-${paymentId}`).changes, name).toBe(1);
  db.close();
  try {
    const ask = (key: string, account: string) => app.inject({ method: "GET", url: `/v2/payment/intent/${paymentId}/audit?external_account_id=${account}`, headers: { authorization: `Bearer ${key}` } });
    const answer = await ask(own.key, "acct_a");
    expect(answer.statusCode, answer.body).toBe(200);
    const body = answer.json();
    expect(body).toMatchObject({ payment_id: paymentId, chain: "broken", allowed_next_steps: [] });
    expect(body.findings.map((f: { kind: string }) => f.kind)).toContain(kind);
    expect((await ask(other.key, "acct_b")).statusCode).toBe(404);
  } finally {
    await app.close();
    await engine.close();
  }
});
