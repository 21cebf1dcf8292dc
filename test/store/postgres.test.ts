import { randomUUID } from "node:crypto";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { WrongExpectedRevision } from "../../src/store/port.js";
import { loadMigrations } from "../../src/store/migrations.js";
import { createPostgresStore } from "../../src/store/postgres/index.js";
import { testDatabase } from "../support/postgres.js";
import { claimOf, collect, event, eventStoreContract, idem, readModelStoreContract, type StoreFixture } from "./contract.js";
import { readModelTablesContract } from "./read-model-tables.js";

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
readModelTablesContract("postgres", postgresFixture("readModels"), { durable: true });

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

describe("PostgreSQL set-based group commit (append_batch_set)", () => {
  it("checks every append of a batch in one statement: retries, wrong revisions and lost claims answer alone, the rest commit together", async () => {
    const schema = `t_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
    const { events: store, readModels } = await createPostgresStore({ connectionString: database, schema });
    await readModels.close();
    const stored = [event("x0"), event("x1")];
    const before = await store.append("x", stored, { expectedRevision: "no_stream" });
    const held = claimOf("k-held");
    const lost = claimOf("k-lost");
    expect(await store.claimIdempotency(held, "2030-01-01T00:00:00.000Z")).toBeUndefined();
    expect(await store.claimIdempotency(lost, "2030-01-01T00:00:00.000Z")).toBeUndefined();
    const c = new pg.Client({ connectionString: database, options: `-c search_path=${schema}` });
    await c.connect();
    type Append = { stream: string; expected: string; events: ReturnType<typeof event>[]; idempotency?: ReturnType<typeof idem> };
    const batch: Append[] = [
      { stream: "x", expected: "0", events: [event("wrong")] }, // CF001, actual revision 1
      { stream: "a", expected: "no_stream", events: [event("a0"), event("a1"), event("a2")], idempotency: idem(held) },
      { stream: "y", expected: "no_stream", events: [event("y0")], idempotency: idem({ ...lost, token: "not-the-claim" }) }, // CF002
      { stream: "b", expected: "any", events: [event("b0")] },
      { stream: "e", expected: "no_stream", events: [] }, // an empty append: the stream's revision and the log's head
    ];
    // a retry of the stored append (its original result, whatever the expected revision); alone:
    // a batch naming a stream twice goes append by append (append_batch_json)
    const retryOfStored: Append = { stream: "x", expected: "5", events: stored };
    const call = (appends: Append[]) =>
      c.query<{ next_revision: string | null; last_position: string | null; code: string | null; detail: string | null }>(
        "SELECT * FROM append_batch_set($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        [
          appends.map((a) => a.stream),
          appends.map((a) => a.expected),
          appends.map((a) => a.events.length),
          appends.map((a) => (a.idempotency ? JSON.stringify(a.idempotency) : null)),
          appends.flatMap((a) => a.events.map((e) => e.id)),
          appends.flatMap((a) => a.events.map((e) => e.type)),
          appends.flatMap((a) => a.events.map((e) => e.version)),
          JSON.stringify(appends.flatMap((a) => a.events.map((e) => e.data))),
          JSON.stringify(appends.flatMap((a) => a.events.map((e) => e.metadata))),
        ],
      );
    const { rows } = await call(batch);
    // positions: reserved for the 5 events, used by the accepted appends in batch order (a then b)
    const p = Number(rows[1]!.last_position) - 2;
    expect(rows).toEqual([
      { next_revision: null, last_position: null, code: "CF001", detail: "1", constraint_name: null },
      { next_revision: "2", last_position: String(p + 2), code: null, detail: null, constraint_name: null },
      { next_revision: null, last_position: null, code: "CF002", detail: null, constraint_name: null },
      { next_revision: "0", last_position: String(p + 3), code: null, detail: null, constraint_name: null },
      { next_revision: "-1", last_position: String(before.position), code: null, detail: null, constraint_name: null },
    ]);
    expect(p).toBeGreaterThan(before.position);
    const retry = await call([retryOfStored]);
    expect(retry.rows).toEqual([{ next_revision: "1", last_position: String(before.position), code: null, detail: null, constraint_name: null }]);
    const { rows: written } = await c.query<{ stream: string; revision: string; position: string; n: string }>(
      "SELECT stream, revision, position, count(*) OVER (PARTITION BY tx) AS n FROM events WHERE stream IN ('a', 'b', 'y') ORDER BY position",
    );
    expect(written.map((r) => [r.stream, r.revision, r.position, r.n])).toEqual([
      ["a", "0", String(p), "4"],
      ["a", "1", String(p + 1), "4"],
      ["a", "2", String(p + 2), "4"],
      ["b", "0", String(p + 3), "4"],
    ]);
    expect(await store.readIdempotency("k-held")).toEqual(idem(held));
    expect(await store.readIdempotency("k-lost")).toEqual(lost);
    await c.end();
    await store.close();
  });

  it("a batch another transaction overtakes (a stream revision committed meanwhile) fails as a whole, then goes again append by append", async () => {
    const schema = `t_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
    const { events: store, readModels } = await createPostgresStore({ connectionString: database, schema });
    await readModels.close();
    await store.append("warm", [event("warm")], { expectedRevision: "no_stream" });
    const client = async () => {
      const c = new pg.Client({ connectionString: database, options: `-c search_path=${schema}` });
      await c.connect();
      return c;
    };
    // Another process holds revision 0 of "contested", uncommitted: INSERTs of it wait for that transaction.
    const other = await client();
    await other.query("BEGIN");
    const { rows } = await other.query<{ p: string }>("SELECT reserve_positions(1) AS p");
    const theirs = event("theirs");
    await other.query("INSERT INTO events (position, stream, revision, id, type, version, data, metadata) VALUES ($1, 'contested', 0, $2, 'theirs', 1, '{}', $3)", [
      rows[0]!.p,
      theirs.id,
      JSON.stringify(theirs.metadata),
    ]);
    // the statement itself: nothing of the batch is kept
    const direct = await client();
    const [ours, beside] = [event("ours"), event("beside")];
    const statement = direct
      .query("SELECT * FROM append_batch_set($1, $2, $3, $4, $5, $6, $7, $8, $9)", [
        ["contested", "beside"],
        ["no_stream", "no_stream"],
        [1, 1],
        [null, null],
        [ours.id, beside.id],
        ["ours", "beside"],
        [1, 1],
        "[{},{}]",
        JSON.stringify([ours.metadata, beside.metadata]),
      ])
      .then(
        () => "committed",
        (e: { code?: string }) => e.code,
      );
    // the adapter: the append's batch goes again through append_batch_json, which answers it alone
    const append = store.append("contested", [event("ours")], { expectedRevision: "no_stream" }).catch((e: unknown) => e);
    // both wait on the other transaction's row before it commits (asked of the server, not a sleep)
    const pid = (other as unknown as { processID: number }).processID;
    const watch = await client();
    for (let blocked = 0; blocked < 2; ) {
      await new Promise((r) => setTimeout(r, 10));
      ({ blocked } = (await watch.query<{ blocked: number }>("SELECT count(*)::int AS blocked FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))", [pid])).rows[0]!);
    }
    await other.query("COMMIT");
    expect(await statement).toBe("23505");
    expect(await append).toBeInstanceOf(WrongExpectedRevision);
    expect((await store.readStream("contested")).map((e) => e.type)).toEqual(["theirs"]);
    expect(await store.readStream("beside")).toEqual([]);
    await Promise.all([other.end(), direct.end(), watch.end()]);
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
    const files = loadMigrations(new URL("../../src/store/postgres/migrations/", import.meta.url));
    expect(files.length).toBeGreaterThanOrEqual(7);
    expect(rows).toEqual(files.map(({ version }) => ({ version })));
    await Promise.all(stores.flatMap((s) => [s.events.close(), s.readModels.close()]));
  });
});
