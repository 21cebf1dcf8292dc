// Numbered SQL migrations: a released file never changes (its digest is recorded here: a change
// is a new file), numbers run without gaps, and a database migrated by an earlier release keeps
// working once the later files run on it.
import { createHash, randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { loadMigrations } from "../../src/store/migrations.js";
import { WrongExpectedRevision } from "../../src/store/port.js";
import { createPostgresStore } from "../../src/store/postgres/index.js";
import { testDatabase } from "../support/postgres.js";
import { event } from "./contract.js";

const dir = (path: string) => new URL(`../../src/store/${path}/`, import.meta.url);
const RELEASED: Record<string, Record<string, string>> = {
  "sqlite/migrations/events": {
    "001_events_idempotency_read_models.sql": "045e19c57d8970472e1d3e4fac1122885c9a2245bc9d307e9e643c194d4c2cd7",
    "002_read_models_rowid.sql": "7a90196fb23595062889413bab906569c57c60e76506c9083c52f7ce3c5a44ec",
    "003_idempotency_claims.sql": "1e1d100dfa12e58daa019c220b6653ad982fbb84283339212814360d92975d0b",
    "004_sequences.sql": "f1c8375a3c9f464cfa52ee888119ea2b22c8a0abc9302fef6d274b84bcc2d4d8",
  },
  "sqlite/migrations/read-models": {
    "001_read_models.sql": "9f4fc92f468f9db73b07b4938af382cd4f52c30c6c61e337cb4fb551f1c5e351",
    "002_read_model_versions.sql": "1f11e87cc3a99127c0d31070ae195bceb75a4009283105ef59ae6ec2ef7f93c3",
  },
  "postgres/migrations": {
    "001_events_idempotency_read_models.sql": "df4e95c77f7b08d8a11e1b6585e1996783c7f5f95aef2030484c5e8c7ac9939a",
    "002_idempotency_claims.sql": "7a5c77f64161b371217396de5259fc0628c5eba931169540587fb74008d1ea0a",
    "003_sequences.sql": "8dd8c1ce730f2d7056a1571ace342028d7a0e7ae998e95d14732131255f56145",
    "004_append_batch.sql": "70d65a9d7579e8ffaed0041af5760fca1587ce9b952a5c603432adefdb821580",
    "005_append_batch_json.sql": "021a45bdbfee6da5181b7b223cefb250b5adf33f1b2a5ef265e98df250bb9bd8",
    "006_append_batch_set.sql": "ae2e78f875512daf658988e0dd06843305304cb95eaf41a8d0043029c2a423e4",
    "007_one_expected_revision_check.sql": "d1109799bfaaa6e43092de91ad744f3cfd5bf41915596ad2dfbe98bd34ed7a37",
    "008_idempotency_key_c_index.sql": "573b97ec4fb2948eb5737fc6eca1b0ceb40b99191d82a9fbe84f3037e4895bdb",
    "009_read_model_versions.sql": "261ed57b180193cd6dfc9d80b3ca3a2bdba1b175bc6de7382dcba86fa28ae62e",
  },
};

describe("migration files", () => {
  it.each(Object.keys(RELEASED))("%s: every released file is unchanged, numbered from 001 without gaps", (path) => {
    const files = loadMigrations(dir(path));
    const digests = Object.fromEntries(files.map((m) => [m.file, createHash("sha256").update(readFileSync(new URL(m.file, dir(path)))).digest("hex")]));
    for (const [file, digest] of Object.entries(RELEASED[path]!)) expect(digests[file], file).toBe(digest);
    expect(files.map((m) => m.version)).toEqual(files.map((_, i) => i + 1));
  });

  it("refuses a directory whose numbers skip one", () => {
    const tmp = mkdtempSync(join(tmpdir(), "cardflow-migrations-"));
    try {
      writeFileSync(join(tmp, "001_first.sql"), "SELECT 1;");
      writeFileSync(join(tmp, "003_third.sql"), "SELECT 3;");
      expect(() => loadMigrations(pathToFileURL(`${tmp}/`))).toThrow(/003_third\.sql: expected migration number 002/);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});

describe("PostgreSQL: a schema migrated by the release before", async () => {
  const database = await testDatabase();

  it("gets the later migrations (7: append_events dropped, one expected-revision check) and keeps its events, appends and checks", async () => {
    const schema = `t_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
    const admin = new pg.Client({ connectionString: database, options: `-c search_path=${schema}` });
    await admin.connect();
    try {
      // What v0.1.0 left: migrations 1 to 6, and an event appended through its append_batch_set.
      await admin.query(`CREATE SCHEMA ${schema}; CREATE TABLE migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
      for (const step of loadMigrations(dir("postgres/migrations")).slice(0, 6)) {
        await admin.query(step.sql.replaceAll("{{schema}}", schema));
        await admin.query("INSERT INTO migrations (version) VALUES ($1)", [step.version]);
      }
      const old = event("old");
      await admin.query("SELECT * FROM append_batch_set($1, $2, $3, $4, $5, $6, $7, $8, $9)", [
        ["s-old"], ["no_stream"], [1], [null], [old.id], [old.type], [1], JSON.stringify([old.data]), JSON.stringify([old.metadata]),
      ]);
      const functions = async () => (await admin.query<{ proname: string }>("SELECT proname FROM pg_proc WHERE pronamespace = $1::regnamespace ORDER BY proname", [schema])).rows.map((r) => r.proname);
      expect(await functions()).toContain("append_events");

      const { events, readModels } = await createPostgresStore({ connectionString: database, schema });
      // 7 and every later one
      const all = loadMigrations(dir("postgres/migrations")).map((m) => m.version);
      expect(all.slice(0, 7)).toEqual([1, 2, 3, 4, 5, 6, 7]);
      expect((await admin.query(`SELECT version FROM migrations ORDER BY version`)).rows.map((r) => r.version)).toEqual(all);
      expect(await functions()).not.toContain("append_events");
      expect(await functions()).toContain("expected_revision_holds");

      expect((await events.readStream("s-old")).map((e) => e.id)).toEqual([old.id]);
      expect(await events.append("s-old", [event("new")], { expectedRevision: 0 })).toMatchObject({ nextRevision: 1 });
      await expect(events.append("s-old", [event("late")], { expectedRevision: 0 })).rejects.toBeInstanceOf(WrongExpectedRevision);
      await expect(events.append("s-old", [event("late")], { expectedRevision: "no_stream" })).rejects.toMatchObject({ actual: 1 });
      // a batch naming one stream twice goes through append_batch (append_batch_json), whose check is the same function
      const twice = await Promise.allSettled([events.append("s-twice", [event()], { expectedRevision: "no_stream" }), events.append("s-twice", [event()], { expectedRevision: "no_stream" })]);
      expect(twice.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
      await Promise.all([events.close(), readModels.close()]);
    } finally {
      await admin.end();
    }
  });
});
