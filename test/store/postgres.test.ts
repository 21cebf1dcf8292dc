import { randomUUID } from "node:crypto";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { createPostgresStore } from "../../src/store/postgres.js";
import { testDatabase } from "../support/postgres.js";
import { collect, event, eventStoreContract, readModelStoreContract, type StoreFixture } from "./contract.js";

const database = await testDatabase();

/** A fresh schema in this file's database; every open() is a new pool on it, like another process. */
function postgresFixture<K extends "events" | "readModels">(port: K) {
  return async (): Promise<StoreFixture<Awaited<ReturnType<typeof createPostgresStore>>[K]>> => {
    const schema = `t_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
    return {
      async open() {
        const store = await createPostgresStore({ connectionString: database, schema, pollMs: 20 });
        await (port === "events" ? store.readModels : store.events).close();
        return store[port];
      },
    };
  };
}

eventStoreContract("postgres", postgresFixture("events"), { durable: true });
readModelStoreContract("postgres", postgresFixture("readModels"), { durable: true });

describe("PostgreSQL group commit", () => {
  it("commits concurrent appends of many streams in shared transactions; a failed check refuses only its own append", async () => {
    const schema = `t_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
    const { events: store, readModels } = await createPostgresStore({ connectionString: database, schema });
    await readModels.close();
    const streams = Array.from({ length: 40 }, (_, i) => `s-${i}`);
    // Two appenders race for the first revision of "contested": exactly one may win.
    const results = await Promise.allSettled([
      ...streams.map((s) => store.append(s, [event(s)], { expectedRevision: "no_stream" })),
      store.append("contested", [event("a")], { expectedRevision: "no_stream" }),
      store.append("contested", [event("b")], { expectedRevision: "no_stream" }),
    ]);
    expect(results.slice(0, 40).every((r) => r.status === "fulfilled")).toBe(true);
    const contested = results.slice(40);
    expect(contested.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    expect(contested.filter((r) => r.status === "rejected").map((r) => (r as PromiseRejectedResult).reason.constructor.name)).toEqual(["WrongExpectedRevision"]);
    const c = new pg.Client({ connectionString: database });
    await c.connect();
    const { rows } = await c.query<{ appends: string; transactions: string }>(`SELECT count(*) AS appends, count(DISTINCT tx) AS transactions FROM ${schema}.events`);
    await c.end();
    expect(Number(rows[0]!.appends)).toBe(41);
    expect(Number(rows[0]!.transactions)).toBeLessThan(41);
    expect((await store.readStream("contested")).map((e) => e.revision)).toEqual([0]);
    await store.close();
  });
  it("an append the database refuses outright fails alone, not the appends batched with it", async () => {
    const schema = `t_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
    const { events: store, readModels } = await createPostgresStore({ connectionString: database, schema });
    await readModels.close();
    const bad = { ...event("bad"), version: 1.5 }; // not an integer: the whole statement would fail
    const results = await Promise.allSettled([
      ...Array.from({ length: 10 }, (_, i) => store.append(`ok-${i}`, [event("ok")], { expectedRevision: "no_stream" })),
      store.append("bad", [bad], { expectedRevision: "no_stream" }),
    ]);
    expect(results.slice(0, 10).every((r) => r.status === "fulfilled")).toBe(true);
    expect(results[10]!.status).toBe("rejected");
    expect(await store.readStream("bad")).toEqual([]);
    expect(await store.readAll()).toHaveLength(10);
    await store.close();
  });
});

describe("PostgreSQL positions under concurrent writers", () => {
  it("hides a committed append while an older append transaction is still open, then delivers both in order", async () => {
    const schema = `t_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
    const { events: store, readModels } = await createPostgresStore({ connectionString: database, schema, pollMs: 20 });
    await readModels.close();
    const live = collect(store, {});
    // A slow writer: reserves its position and inserts, but does not commit yet.
    const slow = new pg.Client({ connectionString: database, options: `-c search_path=${schema}` });
    await slow.connect();
    await slow.query("BEGIN");
    const { rows } = await slow.query<{ p: string }>("SELECT reserve_positions(1) AS p");
    const slowEvent = event("slow");
    await slow.query("INSERT INTO events (position, stream, revision, id, type, version, data, metadata) VALUES ($1, 'slow', 0, $2, 'slow', 1, '{}', $3)", [
      rows[0]!.p,
      slowEvent.id,
      JSON.stringify(slowEvent.metadata),
    ]);
    // A fast writer commits a higher position meanwhile.
    const fast = await store.append("fast", [event("fast")], { expectedRevision: "no_stream" });
    expect(fast.position).toBeGreaterThan(Number(rows[0]!.p));
    expect(await store.readStream("fast")).toHaveLength(1); // its own stream reads at once
    expect(await store.readAll()).toEqual([]); // but the global order waits for the older transaction
    expect(live.got).toEqual([]);
    await slow.query("COMMIT");
    await slow.end();
    await live.until(2);
    expect(live.got.map((e) => e.type)).toEqual(["slow", "fast"]);
    expect((await store.readAll()).map((e) => e.position)).toEqual([Number(rows[0]!.p), fast.position]);
    await store.close();
  });

  it("runs the migrations once when several processes open an empty schema together", async () => {
    const schema = `t_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
    const stores = await Promise.all(Array.from({ length: 4 }, () => createPostgresStore({ connectionString: database, schema })));
    const c = new pg.Client({ connectionString: database });
    await c.connect();
    const { rows } = await c.query(`SELECT version FROM ${schema}.migrations ORDER BY version`);
    await c.end();
    expect(rows).toEqual([{ version: 1 }, { version: 2 }, { version: 3 }, { version: 4 }, { version: 5 }]);
    await Promise.all(stores.flatMap((s) => [s.events.close(), s.readModels.close()]));
  });
});
