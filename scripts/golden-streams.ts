// Golden streams of a release: a real store written by the release's own code, and what that code
// read from it, kept in test/fixtures/streams/<release>/ so that every later release proves it
// still replays them (test/audit/golden-streams.test.ts). Run once per release, on the commit to be
// tagged; a release's folder is never regenerated (this script refuses an existing one).
//
//   npx tsx scripts/golden-streams.ts [--release v0.1.0] [--out test/fixtures/streams]
//
// Writes: store/cardflow.sqlite and store/cardflow.read-models.sqlite (a DATA_DIR as `npm start`
// opens it), events.jsonl (`cardflow events export`), records.json (each payment as GET /v2 answers
// it, and as /v1 presents it), reads.json (the lists: terminals, cards on file, webhook endpoints,
// the event feed), audit.json (`cardflow audit --all --json`), heads.json (`cardflow events heads`)
// and manifest.json (the release, its commit, the flows, the fixture's API keys); and the release's
// machine version in docs/machines/releases.json (`cardflow diagram --diff <release>`; its
// definition is docs/machines/<hash>.json, which `npm run diagrams` keeps).
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import Database from "better-sqlite3";
import { machineDefinition, machineHash } from "../machines/definition.js";
import { createApiKeys } from "../src/api-keys.js";
import { runCli } from "../src/cli/index.js";
import { manualClock } from "../src/clock.js";
import { createEngine } from "../src/engine.js";
import { presentPayment } from "../src/present/api-versions.js";
import { createServer } from "../src/http/server.js";
import { sequentialIds } from "../src/ids.js";
import { createSimulators } from "../src/processors/simulator.js";
import { readModelsPath } from "../src/store/sqlite/files.js";
import { createSqliteStore } from "../src/store/sqlite/index.js";
import { createOutbound } from "../src/outbound/client.js";
import { createWebhooks } from "../src/webhooks/index.js";
import type { PostResult } from "../src/webhooks/transport.js";
import { ACCOUNTS, runGoldenFlows } from "./golden-streams/flows.js";

const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string };
const { values: args } = parseArgs({ options: { release: { type: "string", default: `v${pkg.version}` }, out: { type: "string", default: "test/fixtures/streams" } } });
const release = args.release!;
if (!/^v\d+\.\d+\.\d+$/.test(release)) throw new Error(`--release: ${release} is not a release tag (vX.Y.Z)`);
const target = resolve(args.out!, release);
if (existsSync(target)) {
  console.error(`golden-streams: ${target} exists: a release's golden streams are never regenerated`);
  process.exit(2);
}

const work = mkdtempSync(join(tmpdir(), "cardflow-golden-"));
const storePath = join(work, "cardflow.sqlite");
try {
  // --- write the store with this release's code ---------------------------------------------------
  const clock = manualClock();
  const ids = sequentialIds();
  const sims = createSimulators({ clock, ids });
  const { events: store, readModels } = createSqliteStore({ path: storePath });
  let crashCapture = false;
  const engine = createEngine({
    store,
    readModels,
    clock,
    ids,
    processors: sims,
    fault: (point, attempt) => {
      if (crashCapture && point === "after_call" && attempt.type === "CaptureAttempted") {
        crashCapture = false;
        throw new Error("crash after the processor captured");
      }
    },
  });
  // receivers: acct_a's fails its first post, /hooks/down never answers 2xx, the rest acknowledge
  let firstA = true;
  const post = async (url: string): Promise<PostResult> => {
    if (url.endsWith("/down")) return { status: 503, error: null } as PostResult;
    if (url.endsWith("/acct_a") && firstA) return (firstA = false), { status: 500, error: null } as PostResult;
    return { status: 200, error: null } as PostResult;
  };
  // Delivery's timers as Node's: a 0 ms timer fires a millisecond later. (Its worker sleeps until
  // the lease's renewal time and renews only strictly before it: at exactly that time, a manual
  // clock that fires 0 ms timers at once would loop forever; a real one moves on.)
  const deliveryClock = { now: () => clock.now(), setTimer: (ms: number, fn: () => void) => clock.setTimer(Math.max(1, ms), fn) };
  const webhooks = createWebhooks({
    engine: { ...engine, clock: deliveryClock },
    // sandbox receivers on the loopback (never reached: `post` answers for them)
    outbound: createOutbound({ sandbox: true, allowPrivate: true, allowlist: [] }),
    signingKey: Buffer.alloc(32, 7),
    post,
    random: () => 0.5,
    backoff: { baseMs: 1_000, maxMs: 4_000, horizonMs: 10_000 },
  });
  const app = createServer({ engine, apiKeys: createApiKeys(engine), simulators: sims, webhooks });
  await app.ready();

  const flows = await runGoldenFlows({ app, engine, sims, clock, webhooks, crashNextCapture: () => void (crashCapture = true) });

  // deliveries: until nothing more happens for longer than the longest backoff
  await webhooks.delivery.start();
  let quiet = 0;
  let last = -1;
  for (let i = 0; i < 600 && quiet < 20; i++) {
    await clock.advance(1_000);
    const head = (await store.readAll({ after: Math.max(0, last), maxCount: 1_000_000 })).at(-1)?.position ?? last;
    quiet = head === last ? quiet + 1 : 0;
    last = head;
  }
  await webhooks.delivery.stop();
  await engine.projections.catchUp();
  await webhooks.feed.catchUp();

  // --- what this release reads from it -------------------------------------------------------------
  const get = async (account: string, url: string) => {
    const res = await app.inject({ method: "GET", url, headers: { authorization: `Bearer ${flows.keys[account]}` } });
    if (res.statusCode !== 200) throw new Error(`GET ${url}: ${res.statusCode} ${res.body}`);
    return res.json() as unknown;
  };
  const records: Record<string, unknown> = {};
  for (const [flow, ref] of Object.entries(flows.payments)) {
    const v2 = await get(ref.external_account_id, `/v2/payment/intent/${ref.payment_id}?external_account_id=${ref.external_account_id}`);
    const v1 = JSON.parse(JSON.stringify(presentPayment(await engine.getPayment(ref), "v1")));
    records[flow] = { ...ref, v1, v2 };
  }
  const reads: { account: string; url: string; body: unknown }[] = [];
  const read = async (account: string, url: string) => void reads.push({ account, url, body: await get(account, url) });
  for (const account of Object.values(ACCOUNTS)) {
    await read(account, `/v2/hardware?external_account_id=${account}`);
    await read(account, `/v2/webhook_endpoints?external_account_id=${account}`);
    await read(account, `/v2/events?external_account_id=${account}&limit=1000`);
    for (const customer of flows.customers[account] ?? []) await read(account, `/v1/customer/card?external_account_id=${account}&external_customer_id=${customer}`);
  }
  await app.close();
  await engine.close();

  // --- the fixture ---------------------------------------------------------------------------------
  // one file each, without WAL (checkpointed and vacuumed: small, and nothing beside it)
  for (const path of [storePath, readModelsPath(storePath)]) {
    const db = new Database(path);
    db.pragma("wal_checkpoint(TRUNCATE)");
    db.pragma("journal_mode = DELETE");
    db.exec("VACUUM");
    db.close();
  }
  mkdirSync(join(target, "store"), { recursive: true });
  copyFileSync(storePath, join(target, "store", "cardflow.sqlite"));
  copyFileSync(readModelsPath(storePath), join(target, "store", "cardflow.read-models.sqlite"));

  const cli = async (...argv: string[]) => {
    let out = "";
    const code = await runCli(argv, { out: (t) => void (out += t), err: () => undefined, interactive: false });
    process.exitCode = undefined;
    return { out, code };
  };
  // the CLI reads a copy (an audit catches the read models up, which writes)
  const copy = join(work, "copy");
  mkdirSync(copy);
  copyFileSync(join(target, "store", "cardflow.sqlite"), join(copy, "cardflow.sqlite"));
  copyFileSync(join(target, "store", "cardflow.read-models.sqlite"), join(copy, "cardflow.read-models.sqlite"));
  const on = `sqlite:${join(copy, "cardflow.sqlite")}`;
  const exported = await cli("events", "export", "--store", on);
  const audited = await cli("audit", "--all", "--json", "--no-progress", "--store", on);
  const heads = await cli("events", "heads", "--store", on);
  if (exported.code !== 0 || heads.code !== 0) throw new Error("export or heads failed");
  if (audited.code !== 0) throw new Error(`the audit of the new store has findings:\n${audited.out}`);

  const json = (name: string, value: unknown) => writeFileSync(join(target, name), JSON.stringify(value, null, 2) + "\n");
  writeFileSync(join(target, "events.jsonl"), exported.out);
  json("audit.json", JSON.parse(audited.out));
  json("heads.json", JSON.parse(heads.out));
  json("records.json", records);
  json("reads.json", reads);
  const commit = execFileSync("git", ["rev-parse", "HEAD"], { encoding: "utf8" }).trim();
  const dirty = execFileSync("git", ["status", "--porcelain", "--", "src", "machines", "projections"], { encoding: "utf8" }).trim() !== "";
  json("manifest.json", {
    release,
    package_version: pkg.version,
    commit,
    ...(dirty ? { uncommitted_changes: true } : {}),
    generated_by: "scripts/golden-streams.ts",
    accounts: Object.values(ACCOUNTS),
    api_keys: flows.keys,
    flows: flows.payments,
    events: exported.out.trim().split("\n").length,
  });
  const releasesFile = new URL("../docs/machines/releases.json", import.meta.url);
  const releases = JSON.parse(readFileSync(releasesFile, "utf8")) as Record<string, string>;
  writeFileSync(releasesFile, JSON.stringify({ ...releases, [release]: machineHash(machineDefinition()) }, null, 2) + "\n");
  console.log(`golden-streams: wrote ${target} (${exported.out.trim().split("\n").length} events, ${Object.keys(records).length} payments)`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
