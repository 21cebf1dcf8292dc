// /readyz's lag bound, over real HTTP: with read models that catch up only when read (no live
// projections here), an event older than READY_MAX_LAG_SECONDS that is not projected makes the
// process not ready (503 read_models_behind, Retry-After), a catch-up makes it ready again, and
// a bound of 0 does not check. /healthz stays 200 throughout.
import type { FastifyInstance } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { manualClock } from "../../src/clock.js";
import { createServer } from "../../src/http/server.js";
import { sequentialIds } from "../../src/ids.js";
import { createObservedEngine } from "../../src/observability/index.js";

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function serve(maxLagSeconds: number) {
  const clock = manualClock();
  const { engine } = createObservedEngine({ clock, ids: sequentialIds() });
  app = createServer({ engine, readiness: { maxLagSeconds } });
  await app.listen({ port: 0, host: "127.0.0.1" });
  const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  const get = async (path: string) => {
    const res = await fetch(base + path);
    return { status: res.status, retryAfter: res.headers.get("retry-after"), body: await res.json() };
  };
  return { engine, clock, get };
}

describe("/readyz and the read models' lag", () => {
  it("fails while an unprojected event is older than the bound, and recovers once the read models catch up", async () => {
    const { engine, clock, get } = await serve(30);
    await engine.openAccount({ external_account_id: "acct_lag", processor: "A", currency: "USD" });
    await engine.registerTerminal({ external_account_id: "acct_lag", terminal_type: "A_async" });
    expect((await get("/readyz")).status).toBe(200); // behind, but for less than 30 s
    clock.advance(31_000);
    const behind = await get("/readyz");
    expect(behind).toMatchObject({ status: 503, retryAfter: "1", body: { code: "read_models_behind", status: 503 } });
    expect(behind.body.detail).toMatch(/the read models are 31 s behind the event log \(READY_MAX_LAG_SECONDS 30\)/);
    expect((await get("/healthz")).status).toBe(200);
    await engine.projections.catchUp();
    expect(await get("/readyz")).toMatchObject({ status: 200, body: { status: "ok" } });
  });

  it("a bound of 0 is not checked", async () => {
    const { engine, clock, get } = await serve(0);
    await engine.openAccount({ external_account_id: "acct_nolag", processor: "A", currency: "USD" });
    clock.advance(3_600_000);
    expect((await get("/readyz")).status).toBe(200);
  });
});
