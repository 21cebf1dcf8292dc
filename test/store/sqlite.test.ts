import Database from "better-sqlite3";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { defineProjection } from "../../projections/projection.js";
import { createProjectionRunner } from "../../projections/runner.js";
import { createEngine } from "../../src/engine.js";
import { PROJECTIONS } from "../../projections/registry.js";
import { StoreUnavailable, WrongExpectedRevision } from "../../src/store/port.js";
import { createSqliteStore, readModelsPath } from "../../src/store/sqlite/index.js";
import { bootId, marksOf } from "../../src/store/sqlite/unsynced.js";
import { claimOf, event, eventStoreContract, idem, placed, readModelStoreContract, type StoreFixture } from "./contract.js";
import { readModelTablesContract } from "./read-model-tables.js";
import { paymentsProjection } from "../../projections/payments.js";
import { holdWriteLock } from "../support/write-lock.js";

/** A fresh database file; every open() is a new connection to it, like another process would make. */
function sqliteFixture<K extends "events" | "readModels">(port: K) {
  return async (): Promise<StoreFixture<ReturnType<typeof createSqliteStore>[K]>> => {
    const dir = mkdtempSync(join(tmpdir(), "cardflow-sqlite-"));
    return {
      async open() {
        const store = createSqliteStore({ path: join(dir, "cardflow.db"), pollMs: 20 });
        await (port === "events" ? store.readModels : store.events).close();
        return store[port];
      },
      async dispose() {
        rmSync(dir, { recursive: true, force: true });
      },
    };
  };
}

eventStoreContract("sqlite", sqliteFixture("events"), { durable: true });
readModelStoreContract("sqlite", sqliteFixture("readModels"), { durable: true });
readModelTablesContract("sqlite", sqliteFixture("readModels"), { durable: true });

describe("SQLite group commit", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "cardflow-sqlite-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("commits appends that arrive together in one transaction; a failed check fails only its own append", async () => {
    const commits: number[] = [];
    const { events: store, readModels } = createSqliteStore({ path: join(dir, "c.db"), onCommit: (n) => commits.push(n) });
    await readModels.close();
    await store.append("seed", [event()], { expectedRevision: "no_stream" });
    const claims = Array.from({ length: 64 }, (_, i) => claimOf(i < 63 ? `k${i}` : "refused"));
    for (const c of claims) await store.claimIdempotency(c, "2030-01-01T00:00:00.000Z");
    commits.length = 0;
    const results = await Promise.allSettled([
      ...Array.from({ length: 63 }, (_, i) => store.append(`s${i}`, [event()], { expectedRevision: "no_stream", idempotency: idem(claims[i]!) })),
      store.append("seed", [event()], { expectedRevision: "no_stream", idempotency: idem(claims[63]!) }),
    ]);
    expect(commits).toEqual([64]);
    expect(results.slice(0, 63).every((r) => r.status === "fulfilled")).toBe(true);
    expect(results[63]).toMatchObject({ status: "rejected", reason: expect.any(WrongExpectedRevision) });
    expect(await store.readAll()).toHaveLength(64);
    expect(await store.readIdempotency("k5")).toMatchObject({ state: "done" });
    expect(await store.readIdempotency("refused")).toMatchObject({ state: "in_flight" });
    await store.close();
  });

  it("writes, in the same turn of the event loop, the appends made within a few microtasks of a commit (an attempt's outcome after a processor call that answered at once), one group commit each round", async () => {
    const commits: number[] = [];
    const { events: store, readModels } = createSqliteStore({ path: join(dir, "c.db"), onCommit: (n) => commits.push(n) });
    await readModels.close();
    let turns = 0;
    let ticking = true;
    const tick = () => {
      turns++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    // two callers each append an attempt, then (a few awaits later, as a processor call that
    // answers at once) its outcome, then once more: three group commits of two, in one turn
    const caller = async (stream: string) => {
      await store.append(stream, [event("attempted")], { expectedRevision: "no_stream" });
      for (let hop = 0; hop < 5; hop++) await null;
      await store.append(stream, [event("answered")], { expectedRevision: 0 });
      await store.append(stream, [event("after")], { expectedRevision: 1 });
      return turns;
    };
    const startedAt = turns;
    const ended = await Promise.all([caller("a"), caller("b")]);
    ticking = false;
    expect(commits).toEqual([2, 2, 2]);
    // the first commit runs in the turn after the appends were queued; the other two in that same turn
    expect(ended.map((t) => t - startedAt)).toEqual([1, 1]);
    expect((await store.readStream("a")).map((e) => e.type)).toEqual(["attempted", "answered", "after"]);
    await store.close();
  });

  it("sees its own batch in order: two appends to one stream in one group both check revisions", async () => {
    const commits: number[] = [];
    const { events: store, readModels } = createSqliteStore({ path: join(dir, "c.db"), onCommit: (n) => commits.push(n) });
    await readModels.close();
    const [a, b, c] = await Promise.allSettled([
      store.append("p", [event("created")], { expectedRevision: "no_stream" }),
      store.append("p", [event("captured")], { expectedRevision: 0 }),
      store.append("p", [event("captured-again")], { expectedRevision: 0 }),
    ]);
    expect(commits).toEqual([3]);
    expect([a.status, b.status, c.status]).toEqual(["fulfilled", "fulfilled", "rejected"]);
    expect((await store.readStream("p")).map((e) => e.type)).toEqual(["created", "captured"]);
    await store.close();
  });

  it("gives each append of one group its own outcome and positions: retries, lost claims, an id stored in another stream", async () => {
    const commits: number[] = [];
    const { events: store, readModels } = createSqliteStore({ path: join(dir, "c.db"), onCommit: (n) => commits.push(n) });
    await readModels.close();
    const stored = [event("a"), event("b")];
    const first = await store.append("done", stored, { expectedRevision: "no_stream" });
    const taken = event("taken");
    await store.append("other", [taken], { expectedRevision: "no_stream" });
    const lost = claimOf("lost");
    commits.length = 0;
    for (const withForeignId of [false, true]) {
      const run = withForeignId ? "y" : "x";
      const results = await Promise.allSettled([
        store.append(`${run}1`, [event("one"), event("two"), event("three")], { expectedRevision: "no_stream" }),
        store.append("done", stored, { expectedRevision: "no_stream" }), // a retry: the original result
        store.append(`${run}2`, [event("lost")], { expectedRevision: "no_stream", idempotency: idem(lost) }), // never claimed
        ...(withForeignId ? [store.append(`${run}3`, [taken], { expectedRevision: "no_stream" })] : []),
        store.append(`${run}1`, [event("four")], { expectedRevision: 2 }),
      ]);
      const [one, retry, claimLost] = results;
      const last = results[results.length - 1]!;
      expect(retry).toEqual({ status: "fulfilled", value: placed(first) });
      expect(claimLost).toMatchObject({ status: "rejected", reason: { name: "IdempotencyClaimLost" } });
      if (withForeignId) expect(results[3]).toMatchObject({ status: "rejected" });
      expect(one.status === "fulfilled" && last.status === "fulfilled").toBe(true);
      const written = await store.readStream(`${run}1`);
      expect(written.map((e) => e.type)).toEqual(["one", "two", "three", "four"]);
      expect(one).toMatchObject({ status: "fulfilled", value: { nextRevision: 2, position: written[2]!.position } });
      expect(last).toMatchObject({ status: "fulfilled", value: { nextRevision: 3, position: written[3]!.position } });
      expect(await store.readStream(`${run}2`)).toEqual([]);
      expect(await store.readStream(`${run}3`)).toEqual([]);
    }
    expect(commits).toEqual([4, 5]);
    expect(await store.readIdempotency("lost")).toBeUndefined();
    expect((await store.readAll()).map((e) => e.position)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    await store.close();
  });

  it("migrates a version-1 file: its read models move to their own file (a rowid table), documents, checkpoints and idempotency answers kept", async () => {
    const path = join(dir, "v1.db");
    const v1 = new Database(path);
    v1.exec(`CREATE TABLE read_models (projection TEXT NOT NULL, key TEXT NOT NULL, doc TEXT NOT NULL, PRIMARY KEY (projection, key)) WITHOUT ROWID;
             CREATE TABLE checkpoints (projection TEXT PRIMARY KEY, position INTEGER NOT NULL) WITHOUT ROWID;
             INSERT INTO read_models VALUES ('payments', 'p1', '{"s":"succeeded"}'), ('payments', 'p2', '{"s":"failed"}');
             INSERT INTO checkpoints VALUES ('payments', 7);`);
    v1.exec(`CREATE TABLE events (position INTEGER PRIMARY KEY, stream TEXT NOT NULL, revision INTEGER NOT NULL, id TEXT NOT NULL UNIQUE, type TEXT NOT NULL,
               version INTEGER NOT NULL, data TEXT NOT NULL, metadata TEXT NOT NULL, UNIQUE (stream, revision));
             CREATE TABLE idempotency (key TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, status INTEGER NOT NULL, body TEXT NOT NULL, expires_at TEXT NOT NULL) WITHOUT ROWID;
             CREATE INDEX idempotency_expiry ON idempotency (expires_at);
             INSERT INTO idempotency VALUES ('acct:k', 'fp', 200, '{"ok":true}', '2099-01-01T00:00:00.000Z');
             PRAGMA user_version = 1;`);
    v1.close();
    const { events: store, readModels } = createSqliteStore({ path });
    expect(await readModels.checkpoint("payments")).toBe(7);
    expect(await readModels.list("payments", "")).toEqual([{ s: "succeeded" }, { s: "failed" }]);
    await readModels.commitBatch([{ projection: "payments", docs: [{ key: "p1", doc: { s: "refunded" } }], checkpoint: 8, expectedCheckpoint: 7 }]);
    expect(await readModels.getMany("payments", ["p1", "p2"])).toEqual(new Map([["p1", { s: "refunded" }], ["p2", { s: "failed" }]]));
    // an answer stored before claims existed is a final answer
    expect(await store.readIdempotency("acct:k")).toEqual({ key: "acct:k", fingerprint: "fp", token: "", state: "done", status: 200, body: { ok: true }, expires_at: "2099-01-01T00:00:00.000Z" });
    await Promise.all([store.close(), readModels.close()]);
    const raw = new Database(path, { readonly: true });
    expect(raw.pragma("user_version", { simple: true })).toBe(4);
    expect(raw.prepare("SELECT name FROM sqlite_schema WHERE name IN ('read_models', 'checkpoints')").all()).toEqual([]);
    raw.close();
    const models = new Database(readModelsPath(path), { readonly: true });
    expect(models.prepare("SELECT sql FROM sqlite_schema WHERE name = 'read_models'").get()).toEqual({ sql: expect.not.stringContaining("WITHOUT ROWID") });
    expect(models.pragma("page_size", { simple: true })).toBe(16_384);
    models.close();
    // opened again: nothing left to move, the moved documents stay
    const again = createSqliteStore({ path });
    expect(await again.readModels.getMany("payments", ["p1", "p2"])).toEqual(new Map([["p1", { s: "refunded" }], ["p2", { s: "failed" }]]));
    expect(await again.readModels.checkpoint("payments")).toBe(8);
    await Promise.all([again.events.close(), again.readModels.close()]);
  });

  it("keeps the read models in their own file: they commit while another connection holds the events' write lock, which appends wait for", async () => {
    const path = join(dir, "lock.db");
    const { events: store, readModels } = createSqliteStore({ path, busyTimeoutMs: 300 });
    const other = new Database(path);
    other.exec("BEGIN IMMEDIATE");
    try {
      await readModels.commitBatch([{ projection: "payments", docs: [{ key: "p1", doc: { s: "succeeded" } }], checkpoint: 1, expectedCheckpoint: 0 }]);
      expect(await readModels.get("payments", "p1")).toEqual({ s: "succeeded" });
      await expect(store.append("p", [event()], { expectedRevision: "no_stream" })).rejects.toBeInstanceOf(StoreUnavailable);
    } finally {
      other.exec("ROLLBACK");
      other.close();
    }
    await store.append("p", [event()], { expectedRevision: "no_stream" });
    await Promise.all([store.close(), readModels.close()]);
    const models = new Database(readModelsPath(path), { readonly: true });
    expect(models.prepare("SELECT position FROM checkpoints WHERE projection = 'payments'").get()).toEqual({ position: 1 });
    models.close();
  });

  it("a file where the store's directory would be made (DATA_DIR given a file): refused naming the store's file and why, not a bare EEXIST", () => {
    const file = join(dir, "a-file");
    writeFileSync(file, "");
    const path = join(file, "cardflow.sqlite");
    expect(() => createSqliteStore({ path })).toThrow(`${path} (the event store) cannot be opened: a file is in the way of its directory (EEXIST)`);
    const deeper = join(file, "sub", "cardflow.sqlite");
    expect(() => createSqliteStore({ path: deeper })).toThrow(`${deeper} (the event store) cannot be opened: a file is in the way of its directory (ENOTDIR)`);
  });

  it("reads a sequence's next integer (a count of 0) without writing: it answers while another connection holds the write lock", async () => {
    const path = join(dir, "sequences.db");
    const { events: store, readModels } = createSqliteStore({ path, busyTimeoutMs: 300 });
    expect(await store.reserveIds("watched", 2)).toBe(1);
    const other = new Database(path);
    other.exec("BEGIN IMMEDIATE");
    try {
      expect(await store.reserveIds("watched", 0)).toBe(3);
      expect(await store.reserveIds("never_reserved", 0)).toBe(1);
    } finally {
      other.exec("ROLLBACK");
      other.close();
    }
    await Promise.all([store.close(), readModels.close()]);
  });

  it("opens a new file while another process holds its write lock (SQLite runs no busy handler for the switch to WAL): it waits, then opens", async () => {
    const path = join(dir, "new.db");
    const { released } = await holdWriteLock(path, 300);
    const started = Date.now();
    const { events: store, readModels } = createSqliteStore({ path });
    expect(Date.now() - started).toBeGreaterThanOrEqual(100); // it waited for the lock (a refusal took 0 ms)
    await store.append("p", [event()], { expectedRevision: "no_stream" });
    await Promise.all([store.close(), readModels.close(), released]);
    const raw = new Database(path, { readonly: true });
    expect(raw.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(raw.prepare("SELECT count(*) AS n FROM events").get()).toEqual({ n: 1 });
    raw.close();
  });

  it("commits the read models in a worker: waiting for another connection's write lock leaves the event loop idle; past the bound, StoreUnavailable and nothing written", async () => {
    const path = join(dir, "committer.db");
    const { events, readModels } = createSqliteStore({ path, busyTimeoutMs: 300 });
    const commit = (key: string, checkpoint: number, expectedCheckpoint: number) => readModels.commitBatch([{ projection: "docs", docs: [{ key, doc: { key } }], checkpoint, expectedCheckpoint }]);
    await commit("first", 1, 0);
    const other = new Database(readModelsPath(path));
    other.exec("BEGIN IMMEDIATE");
    // held for 200 ms, under the bound: the commit waits, then applies. SQLite's own wait blocks its
    // thread: on the loop (LOCK_WAIT_MS per try, between pauses) that was a third of the wait or more
    const before = performance.eventLoopUtilization();
    const waited = commit("second", 2, 1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const busy = performance.eventLoopUtilization(before).utilization;
    other.exec("COMMIT");
    await waited;
    expect(busy).toBeLessThan(0.15);
    expect(await readModels.get("docs", "second")).toEqual({ key: "second" });
    // held past the bound: refused, the batch rolled back whole
    other.exec("BEGIN IMMEDIATE");
    await expect(commit("third", 3, 2)).rejects.toBeInstanceOf(StoreUnavailable);
    other.exec("ROLLBACK");
    other.close();
    expect(await readModels.get("docs", "third")).toBeUndefined();
    expect(await readModels.checkpoint("docs")).toBe(2);
    await commit("third", 3, 2);
    await expect(commit("fourth", 4, 2)).rejects.toThrow("projection docs: expected checkpoint 2, actual 3");
    await Promise.all([events.close(), readModels.close()]);
  });

  it("writes a WAL-mode file that a plain connection reads", async () => {
    const path = join(dir, "c.db");
    const { events: store, readModels } = createSqliteStore({ path });
    await store.append("p", [event()], { expectedRevision: "no_stream" });
    await Promise.all([store.close(), readModels.close()]);
    const raw = new Database(path, { readonly: true });
    expect(raw.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(raw.prepare("SELECT count(*) AS n FROM events").get()).toEqual({ n: 1 });
    raw.close();
  });
});

describe("SQLite read models committed unsynced in a catch-up from zero (synchronous=OFF behind a mark of this boot)", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "cardflow-unsynced-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** A process in its bulk window, killed with SIGKILL once it committed: its mark stays behind. */
  async function killedInBulk(path: string) {
    const worker = fileURLToPath(new URL("./processes/bulk-worker.ts", import.meta.url));
    const child = spawn(process.execPath, ["--import", "tsx", worker, path], { stdio: ["ignore", "pipe", "inherit"] });
    const exited = new Promise((resolve) => child.on("exit", resolve));
    await new Promise<void>((resolve, reject) => {
      createInterface({ input: child.stdout! }).on("line", (line) => line === "committed" && resolve());
      child.on("exit", (code) => reject(new Error(`the bulk worker exited (${code}) before committing`)));
    });
    // alive and in its window: another process opening the store keeps its mark and sees its commit
    const other = createSqliteStore({ path });
    expect(marksOf(readModelsPath(path))).toEqual([expect.objectContaining({ boot_id: bootId(), pid: child.pid })]);
    expect(await other.readModels.get("worker", "p1")).toEqual({ s: "succeeded" });
    await Promise.all([other.events.close(), other.readModels.close()]);
    child.kill("SIGKILL");
    await exited;
    return child.pid!;
  }

  it("the runner's catch-up from zero of more than a batch runs in a window: its mark is durable before, gone after, and later catch-ups run without one", async () => {
    expect(bootId()).toMatch(/^[0-9a-f-]{36}$/);
    const path = join(dir, "c.db");
    const { events: store, readModels } = createSqliteStore({ path });
    for (let i = 0; i < 5; i++) await store.append(`payment-p${i}`, [event()], { expectedRevision: "no_stream" });
    const marksSeen: number[] = [];
    const counting = defineProjection<{ n: number }>({
      name: "counting",
      keyOf: (e) => e.stream,
      apply: (doc) => {
        marksSeen.push(marksOf(readModelsPath(path)).length);
        return { n: (doc?.n ?? 0) + 1 };
      },
    });
    const runner = createProjectionRunner({ store, readModels, projections: [counting], batchSize: 2 });
    expect(await runner.catchUp()).toBe(5);
    expect(marksSeen).toEqual([1, 1, 1, 1, 1]);
    expect(marksOf(readModelsPath(path))).toEqual([]);
    await store.append("payment-p5", [event()], { expectedRevision: "no_stream" });
    await store.append("payment-p6", [event()], { expectedRevision: "no_stream" });
    await runner.catchUp();
    expect(marksSeen.slice(5)).toEqual([0, 0]);
    // a rebuild is a catch-up from zero again
    await runner.rebuild("counting");
    expect(marksSeen.slice(7)).toEqual([1, 1, 1, 1, 1, 1, 1]);
    expect(await readModels.count("counting")).toBe(7);
    await Promise.all([store.close(), readModels.close()]);
  });

  it("a process killed in its window (the machine still up) leaves a mark of this boot: the next open syncs the file for it, removes the mark and keeps the read models", async () => {
    const path = join(dir, "killed.db");
    const pid = await killedInBulk(path);
    expect(marksOf(readModelsPath(path))).toEqual([expect.objectContaining({ boot_id: bootId(), pid })]);
    const { events, readModels } = createSqliteStore({ path });
    expect(marksOf(readModelsPath(path))).toEqual([]);
    expect(await readModels.checkpoint("worker")).toBe(3);
    expect(await readModels.get("worker", "p1")).toEqual({ s: "succeeded" });
    await Promise.all([events.close(), readModels.close()]);
  });

  it("a mark of another boot (the machine went down in a window) discards the read models' file at open; the engine rebuilds them from the events", async () => {
    const path = join(dir, "rebooted.db");
    const live = createSqliteStore({ path });
    const engine = createEngine({ store: live.events, readModels: live.readModels });
    await engine.openAccount({ external_account_id: "acct_1", processor: "A", currency: "USD" });
    const { payment_id } = await engine.createIntent({ external_account_id: "acct_1", amount: "10.00", payment_method_types: "card_present", capture_method: "manual" });
    await engine.projections.catchUp();
    const before = await Promise.all(PROJECTIONS.map((p) => live.readModels.list(p.name, "")));
    expect((await live.readModels.list(paymentsProjection.name, "")).length).toBe(1);
    await engine.close();

    await killedInBulk(path);
    // as after a reboot: the mark names a boot that is not this one
    const [mark] = marksOf(readModelsPath(path));
    writeFileSync(mark!.path, JSON.stringify({ boot_id: "00000000-0000-0000-0000-000000000000", pid: mark!.pid }));

    const again = createSqliteStore({ path });
    expect(marksOf(readModelsPath(path))).toEqual([]);
    for (const name of ["payments", "worker"]) expect([await again.readModels.checkpoint(name), await again.readModels.count(name)]).toEqual([0, 0]);
    expect((await again.events.readStream(`payment-${payment_id}`)).length).toBe(1);
    const rebuilt = createEngine({ store: again.events, readModels: again.readModels });
    await rebuilt.projections.catchUp();
    expect(await Promise.all(PROJECTIONS.map((p) => again.readModels.list(p.name, "")))).toEqual(before);
    expect(await rebuilt.getPayment({ external_account_id: "acct_1", payment_id })).toMatchObject({ payment_id, status: "requires_payment_method" });
    await rebuilt.close();
  });

  it("a mark that cannot be read (its bytes never reached the disk) counts as another boot's", async () => {
    const path = join(dir, "torn.db");
    const first = createSqliteStore({ path });
    await first.readModels.commitBatch([{ projection: "payments", docs: [{ key: "p1", doc: { s: "succeeded" } }], checkpoint: 1 }]);
    await Promise.all([first.events.close(), first.readModels.close()]);
    writeFileSync(`${readModelsPath(path)}.unsynced-torn`, "");
    const { events, readModels } = createSqliteStore({ path });
    expect(await readModels.count("payments")).toBe(0);
    expect(marksOf(readModelsPath(path))).toEqual([]);
    await Promise.all([events.close(), readModels.close()]);
  });
});

describe("SQLite read models committed off the loop, the next batch folded while one commits", () => {
  it("several runners, each on its own handle of one file (its own committer, as processes), apply every event exactly once, as a rebuild does", { timeout: 60_000 }, async () => {
    // applying an event twice throws, and every event is counted: a fold on documents a failed commit left is caught
    const strict = defineProjection<{ last: number; positions: number[] }>({
      name: "strict",
      keyOf: (e) => e.stream,
      apply: (doc, e) => {
        if (doc && e.position <= doc.last) throw new Error(`event ${e.position} applied twice`);
        return { last: e.position, positions: [...(doc?.positions ?? []), e.position] };
      },
    });
    const dir = mkdtempSync(join(tmpdir(), "cardflow-pipelined-"));
    try {
      const path = join(dir, "c.db");
      const handles = Array.from({ length: 3 }, () => createSqliteStore({ path }));
      const store = handles[0]!.events;
      const append = async (from: number, to: number) => {
        for (let r = from; r < to; r++) for (let s = 0; s < 2; s++) await store.append(`s${s}`, [event()], { expectedRevision: r - 1 });
      };
      await append(0, 2);
      await createProjectionRunner({ store, readModels: handles[0]!.readModels, projections: [strict] }).catchUp(); // live from here: not from zero
      await append(2, 160); // two streams: consecutive batches fold the same documents
      // the most commits each handle had under way at once
      const underWay = handles.map(() => ({ now: 0, most: 0 }));
      const runners = handles.map(({ readModels }, i) => {
        const watched: typeof readModels = {
          ...readModels,
          commitBatch: async (commits) => {
            const u = underWay[i]!;
            u.most = Math.max(u.most, ++u.now);
            try {
              return await readModels.commitBatch(commits);
            } finally {
              u.now--;
            }
          },
        };
        return createProjectionRunner({ store: handles[i]!.events, readModels: watched, projections: [strict], batchSize: 3 + i });
      });
      expect(await Promise.all(runners.map((r) => r.catchUp()))).toEqual([320, 320, 320]);
      expect(underWay.some((u) => u.most >= 2)).toBe(true);
      // each stream's every event, once, in order: what a rebuild folds
      const docs = await handles[0]!.readModels.list<{ positions: number[] }>("strict", "");
      const streams = await Promise.all(docs.map((_, s) => store.readStream(`s${s}`)));
      expect(docs.map((d) => d.positions)).toEqual(streams.map((events) => events.map((e) => e.position)));
      expect(docs.flatMap((d) => d.positions)).toHaveLength(320);
      await Promise.all(handles.flatMap((h) => [h.events.close(), h.readModels.close()]));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
