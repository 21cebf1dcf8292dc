// The audit route on a history the machine cannot fold: what it exists to report. An event removed
// or unreadable in the store is a broken chain with its findings (as `cardflow audit` says), not a
// 500 from the payment's state read on the way; another account still gets 404.
import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { createApiKeys } from "../../src/api-keys.js";
import { createEngine } from "../../src/engine.js";
import { createServer } from "../../src/http/server.js";
import { createSimulators } from "../../src/processors/simulator.js";
import { systemClock } from "../../src/clock.js";
import { randomIds } from "../../src/ids.js";
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

it("a command on such a history: 500 stored_history_unreadable, saying why; another account still 404", async () => {
  const path = join(dir, "routes.sqlite");
  const { events, readModels } = createSqliteStore({ path });
  const flows = await runFlows({ store: events, readModels });
  const paymentId = flows.payments.terminal_manual!;
  const keys = createApiKeys(flows.engine);
  const own = await keys.issue("acct_a", "test");
  const other = await keys.issue("acct_b", "test");
  await flows.engine.projections.caughtUp();
  await flows.engine.close();
  const db = new Database(path);
  // revision 3 made another type: the machine does not allow it there
  expect(db.prepare("UPDATE events SET type = 'PaymentCanceled' WHERE stream = ? AND revision = 2").run(`payment-${paymentId}`).changes).toBe(1);
  db.close();
  // a service started on the store afterwards: it reads the payment's stream for a command
  const reopened = createSqliteStore({ path });
  const engine = createEngine({ store: reopened.events, readModels: reopened.readModels, processors: createSimulators({ clock: systemClock, ids: randomIds() }) });
  const app = createServer({ engine });
  try {
    // a command loads the payment's stream
    const read = (key: string, account: string) =>
      app.inject({ method: "POST", url: "/v2/payment/capture", headers: { authorization: `Bearer ${key}` }, payload: { external_account_id: account, payment_id: paymentId, amount: "1.00" } });
    const answer = await read(own.key, "acct_a");
    expect(answer.statusCode, answer.body).toBe(500);
    expect(answer.json()).toMatchObject({ code: "stored_history_unreadable", status: 500 });
    expect(answer.json().detail).toMatch(/events were changed outside cardflow; `cardflow audit` names what changed/);
    expect((await read(other.key, "acct_b")).statusCode).toBe(404);
    // the status read folds the stream too: the same answer
    const status = await app.inject({ method: "GET", url: `/v2/payment/intent/${paymentId}?external_account_id=acct_a`, headers: { authorization: `Bearer ${own.key}` } });
    expect([status.statusCode, status.json().code]).toEqual([500, "stored_history_unreadable"]);
  } finally {
    await app.close();
    await engine.close();
  }
});
