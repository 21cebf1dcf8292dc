import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Command } from "commander";
import { createProgram } from "../../src/cli/index.js";
import { exportEvents } from "../../src/audit/transfer.js";
import { runFlows, type Flows } from "./flows.js";
import { cardflow, cardflowOn, withoutStoreLine } from "./run-cli.js";

let flows: Flows;
let dir: string;
let file: string;
let lines: string[];

beforeAll(async () => {
  flows = await runFlows();
  lines = [];
  for await (const l of exportEvents(flows.engine.store)) lines.push(l);
  dir = await mkdtemp(join(tmpdir(), "cardflow-audit-"));
  file = join(dir, "events.jsonl");
  await writeFile(file, lines.join("\n") + "\n");
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

afterEach(() => {
  process.exitCode = undefined;
});

describe("cardflow CLI", () => {
  it("audit <payment_id> prints the timeline and the verdicts", async () => {
    const { out, code } = await cardflow("audit", flows.payments.terminal_manual!, "--store", `jsonl:${file}`);
    expect(code).toBe(0);
    expect(out).toContain(`payment ${flows.payments.terminal_manual}`);
    expect(out).toMatch(/PaymentAuthorized\s+payment_method_requested → requires_capture\s+25\.00 \/ 0\.00 \/ 0\.00/);
    expect(out).toMatch(/processor:A/);
    expect(out).toContain("final state (recomputed from the events): succeeded");
    expect(out).toMatch(/hash chain: intact; head [0-9a-f]{64}/);
    expect(out).toContain("findings: none");
  });

  it("long reads draw a progress line on an interactive stderr, and clear it", async () => {
    const { out, err } = await cardflowOn({ interactive: true }, "replay", "--store", `jsonl:${file}`);
    expect(withoutStoreLine(err)).toMatch(/^(\r\x1b\[2Kreplay: replaying [█░]{24} \d+% · [\d,]+ of 69 events · [\d,]+ events\/s)+\r\x1b\[2K$/);
    expect(err).toContain("replaying ████████████████████████ 100% · 69 of 69 events");
    // audit --all: every phase has a total and reaches it
    const audited = await cardflowOn({ interactive: true }, "audit", "--all", "--store", `jsonl:${file}`);
    expect(audited.err).toContain("audit: reading events ████████████████████████ 100% · 69 of 69 events");
    expect(audited.err).toContain("audit: verifying streams ████████████████████████ 100% · 16 of 16 streams");
    expect(out).toContain("illegal transitions: none");
    expect(withoutStoreLine((await cardflowOn({ interactive: true }, "audit", "--all", "--no-progress", "--store", `jsonl:${file}`)).err)).toBe("");
  });

  it("audit --all exits 1 with a clear list when a file was tampered with", async () => {
    expect((await cardflow("audit", "--all", "--store", `jsonl:${file}`)).code).toBe(0);
    const tampered = join(dir, "tampered.jsonl");
    const i = lines.findIndex((l) => l.includes('"type":"PaymentRefunded"'));
    const edited = [...lines];
    edited[i] = edited[i]!.replace('"amount":"5.00"', '"amount":"2.00"');
    edited.splice(lines.findIndex((l) => l.includes('"type":"CardSaved"')), 1);
    await writeFile(tampered, edited.join("\n"));
    const { out, code } = await cardflow("audit", "--all", "--store", `jsonl:${tampered}`);
    expect(code).toBe(1);
    expect(out).toMatch(/findings: \d+/);
    expect(out).toMatch(/\[edited\] PaymentRefunded .* was edited/);
    const json = JSON.parse((await cardflow("audit", "--all", "--json", "--store", `jsonl:${tampered}`)).out);
    expect(json.findings.map((f: { kind: string }) => f.kind)).toContain("edited");
  });

  it("audit exits 1 with its findings, not 2, when an event the machine refuses lies past the read models (their catch-up stops there)", async () => {
    const sqlite = join(dir, "refused", "cardflow.sqlite");
    expect((await cardflow("events", "import", file, "--store", `sqlite:${sqlite}`)).code).toBe(0);
    expect((await cardflow("audit", "--all", "--no-progress", "--store", `sqlite:${sqlite}`)).code).toBe(0); // the read models caught up
    // a second refund of a refunded payment's last event, written into the file behind the engine's back
    const stream = `payment-${flows.payments.terminal_manual}`;
    const { default: Database } = await import("better-sqlite3");
    const db = new Database(sqlite);
    db.prepare("INSERT INTO events (stream, revision, id, type, version, data, metadata) SELECT stream, revision + 1, '00000000-0000-4000-8000-00000000beef', type, version, data, metadata FROM events WHERE stream = ? ORDER BY revision DESC LIMIT 1").run(stream);
    db.close();
    for (const args of [["--all"], [flows.payments.terminal_manual!]]) {
      const { out, err, code } = await cardflow("audit", ...args, "--no-progress", "--store", `sqlite:${sqlite}`);
      expect(code, err).toBe(1);
      expect(out).toMatch(/\[(illegal_transition|guard_failed|inserted)\]/);
    }
    const json = JSON.parse((await cardflow("audit", "--all", "--json", "--no-progress", "--store", `sqlite:${sqlite}`)).out);
    expect(json.findings.map((f: { kind: string }) => f.kind)).toEqual(expect.arrayContaining(["inserted"]));
    // the record as of a moment after it has no right answer: said, with where to look
    const later = await cardflow("as-of", flows.payments.terminal_manual!, "2100-01-01T00:00:00Z", "--store", `sqlite:${sqlite}`);
    expect(later.code).toBe(2);
    expect(later.err).toMatch(new RegExp(`its stream holds an event the machine refuses .*cardflow audit ${flows.payments.terminal_manual}`));
  });

  it("an event whose data is not JSON is an `unreadable` finding naming it, and the audit goes on; the commands that cannot skip it name it", async () => {
    const sqlite = join(dir, "unreadable", "cardflow.sqlite");
    expect((await cardflow("events", "import", file, "--store", `sqlite:${sqlite}`)).code).toBe(0);
    const stream = `payment-${flows.payments.terminal_manual}`;
    const { default: Database } = await import("better-sqlite3");
    const db = new Database(sqlite);
    const { id, position } = db.prepare("SELECT id, position FROM events WHERE stream = ? AND revision = 1").get(stream) as { id: string; position: number };
    db.prepare(`UPDATE events SET data = '{"amount":' WHERE id = ?`).run(id);
    db.close();
    const named = `event ${id} (stream ${stream}, revision 1, position ${position}) cannot be read: its data is not JSON (`;

    // before the read models caught up (their catch-up stops at it: read_model_behind) and as they are
    for (const catchUp of [[], ["--no-catch-up"]]) {
      const all = await cardflow("audit", "--all", "--json", "--no-progress", ...catchUp, "--store", `sqlite:${sqlite}`);
      expect(all.code, all.err).toBe(1);
      const report = JSON.parse(all.out);
      expect(report).toMatchObject({ streams: 16, events: 69, read_models_not_compared: 1 });
      // the stream is checked up to it: no finding past it; every other stream verified, nothing found there
      const findings = report.findings.filter((f: { kind: string }) => f.kind !== "read_model_behind");
      expect(findings).toEqual([{ kind: "unreadable", subject: stream, event_id: id, revision: 1, message: expect.stringContaining(named) }]);
      expect(findings[0].message).toMatch(/; the 8 readable event\(s\) after it are not checked$/);
      // caught up to the event before it, not to the start of the batch holding it
      if (catchUp.length === 0) {
        const behind = report.findings.filter((f: { kind: string }) => f.kind === "read_model_behind");
        expect(behind.length).toBeGreaterThan(0);
        for (const f of behind) expect(f.message).toMatch(new RegExp(`is at position ${position - 1}, the events reach 69$`));
      }
    }
    const one = await cardflow("audit", flows.payments.terminal_manual!, "--store", `sqlite:${sqlite}`);
    expect(one.code, one.err).toBe(1);
    expect(one.out).toContain(`findings: 1\n  [unreadable] ${named}`);
    expect(one.out).toContain("hash chain: BROKEN");
    for (const args of [["events", "export"], ["replay"], ["as-of", flows.payments.terminal_manual!, "2100-01-01T00:00:00Z"]]) {
      const failed = await cardflow(...args, "--store", `sqlite:${sqlite}`);
      expect(failed.code, args.join(" ")).toBe(2);
      expect(withoutStoreLine(failed.err)).toContain(`cardflow: ${named}`);
    }
  });

  it("audit --all names the read-model documents no event explains (a payment stream deleted)", async () => {
    const sqlite = join(dir, "deleted", "cardflow.sqlite");
    expect((await cardflow("events", "import", file, "--store", `sqlite:${sqlite}`)).code).toBe(0);
    expect((await cardflow("audit", "--all", "--no-progress", "--store", `sqlite:${sqlite}`)).code).toBe(0); // the read models caught up
    const { default: Database } = await import("better-sqlite3");
    const db = new Database(sqlite);
    db.prepare("DELETE FROM events WHERE stream = ?").run(`payment-${flows.payments.terminal_manual}`);
    db.close();
    const { out, code } = await cardflow("audit", "--all", "--no-progress", "--store", `sqlite:${sqlite}`);
    expect(code).toBe(1);
    expect(out).toMatch(new RegExp(`\\[read_model_mismatch\\] read model payment_states_v\\d+ has 1 document\\(s\\) no event explains: ${flows.payments.terminal_manual}\n`));
  });

  it("events heads saves anchors; audit --all --anchors finds a truncated stream", async () => {
    const heads = await cardflow("events", "heads", "--store", `jsonl:${file}`);
    const anchors = join(dir, "heads.json");
    await writeFile(anchors, heads.out);
    expect(Object.keys(JSON.parse(heads.out))).toContain(`payment-${flows.payments.terminal_manual}`);
    const truncated = join(dir, "truncated.jsonl");
    const last = lines.map((l) => JSON.parse(l).stream).lastIndexOf(`payment-${flows.payments.terminal_manual}`);
    await writeFile(truncated, lines.filter((_, i) => i !== last).join("\n"));
    expect((await cardflow("audit", "--all", "--store", `jsonl:${truncated}`)).code).toBe(0);
    // the summary says how many heads were checked, in text and JSON
    const intact = await cardflow("audit", "--all", "--anchors", anchors, "--store", `jsonl:${file}`);
    expect(intact.code).toBe(0);
    expect(intact.out).toContain("\nanchors: 16 heads checked, all held\nfindings: none\n");
    const intactJson = JSON.parse((await cardflow("audit", "--all", "--json", "--anchors", anchors, "--store", `jsonl:${file}`)).out);
    expect(intactJson.anchors).toEqual({ checked: 16, held: 16, streams_not_in_store: 0 });
    // without --anchors, no anchors said checked
    expect((await cardflow("audit", "--all", "--store", `jsonl:${file}`)).out).not.toContain("anchors:");
    const { out, code } = await cardflow("audit", "--all", "--anchors", anchors, "--store", `jsonl:${truncated}`);
    expect(code).toBe(1);
    expect(out).toMatch(/\[anchor_missing\] payment-pi_\w+ no longer holds its anchored head/);
    expect(out).toContain("\nanchors: 16 heads checked, 15 held, 1 NOT held (anchor_missing below)\n");
    // one payment against its anchor: that payment's truncation found, another payment clean
    const one = await cardflow("audit", flows.payments.terminal_manual!, "--anchors", anchors, "--store", `jsonl:${truncated}`);
    expect(one.code).toBe(1);
    expect(one.out).toContain(`[anchor_missing] payment-${flows.payments.terminal_manual} no longer holds its anchored head`);
    expect(one.out).toContain("\nanchors: 1 of the 16 heads given is this payment's, 0 held, 1 NOT held (anchor_missing below)\n");
    const other = Object.values(flows.payments).find((id) => id !== flows.payments.terminal_manual)!;
    const clean = await cardflow("audit", other, "--anchors", anchors, "--store", `jsonl:${truncated}`);
    expect(clean).toMatchObject({ code: 0 });
    expect(clean.out).toContain("\nanchors: 1 of the 16 heads given is this payment's, held\n");
    expect(JSON.parse((await cardflow("audit", other, "--json", "--anchors", anchors, "--store", `jsonl:${truncated}`)).out).anchors).toEqual({ given: 16, checked: 1, held: 1 });
  });

  it("audit --anchors: a heads file with no heads is refused; one whose streams the store does not hold is found, and said so", async () => {
    const empty = join(dir, "empty-heads.json");
    await writeFile(empty, "{}\n");
    for (const args of [["--all"], [flows.payments.terminal_manual!]]) {
      const refused = await cardflow("audit", ...args, "--anchors", empty, "--store", `jsonl:${file}`);
      expect(refused).toMatchObject({ code: 2, out: "" });
      expect(refused.err).toContain(`\ncardflow: --anchors: ${empty} holds no heads, so it anchors nothing (save anchors with: cardflow events heads > heads.json)\n`);
    }
    const heads = JSON.parse((await cardflow("events", "heads", "--store", `jsonl:${file}`)).out) as Record<string, string>;
    const [hash] = Object.values(heads);
    // a file of something else than heads: refused, naming the stream whose head is no hash
    const notHeads = join(dir, "not-heads.json");
    await writeFile(notHeads, JSON.stringify({ ...heads, foo: "bar" }));
    const notHash = await cardflow("audit", "--all", "--anchors", notHeads, "--store", `jsonl:${file}`);
    expect(notHash).toMatchObject({ code: 2, out: "" });
    expect(notHash.err).toContain(`cardflow: --anchors: ${notHeads}: the head of foo is not a SHA-256 in hex (64 of 0-9a-f), got "bar"`);
    // another store's heads (or every anchored stream deleted): each a finding, the summary says none of them is here
    const elsewhere = join(dir, "elsewhere-heads.json");
    await writeFile(elsewhere, JSON.stringify({ "payment-pi_elsewhere": hash, "account-elsewhere": hash }));
    const wrong = await cardflow("audit", "--all", "--anchors", elsewhere, "--store", `jsonl:${file}`);
    expect(wrong.code).toBe(1);
    expect(wrong.out).toContain("\nanchors: 2 heads checked, none held: not one of their streams is in the store (the heads of another store, or every anchored stream deleted)\nfindings: 2\n");
    expect(wrong.out).toContain(`[anchor_missing] payment-pi_elsewhere is not in the store, though anchored at head ${hash!.slice(0, 12)}…: deleted since it was anchored (or the heads are another store's)`);
    expect(JSON.parse((await cardflow("audit", "--all", "--json", "--anchors", elsewhere, "--store", `jsonl:${file}`)).out).anchors).toEqual({ checked: 2, held: 0, streams_not_in_store: 2 });
    // one payment: heads that hold none of its streams check nothing, and it says so (a payment made after they were saved)
    const none = await cardflow("audit", flows.payments.terminal_manual!, "--anchors", elsewhere, "--store", `jsonl:${file}`);
    expect(none.code).toBe(0);
    expect(none.out).toContain("\nanchors: none of the 2 heads given is this payment's: nothing checked (heads saved before the payment was made hold none of its streams)\n");
    // one deleted stream among the store's: counted apart
    const plusGone = join(dir, "plus-gone-heads.json");
    await writeFile(plusGone, JSON.stringify({ ...heads, "payment-pi_gone": hash }));
    const gone = await cardflow("audit", "--all", "--anchors", plusGone, "--store", `jsonl:${file}`);
    expect(gone.code).toBe(1);
    expect(gone.out).toContain("\nanchors: 17 heads checked, 16 held, 1 NOT held (anchor_missing below); 1 of their streams not in the store\n");
  });

  it("replay: a summary of the store, as text or JSON; one payment step by step", async () => {
    const text = await cardflow("replay", "--store", `jsonl:${file}`);
    expect(text.out).toMatch(/replayed 69 events \(64 of 11 payments\) in [\d.]+ ms/);
    expect(text.out).toContain("illegal transitions: none");
    const json = JSON.parse((await cardflow("replay", "--json", "--store", `jsonl:${file}`)).out);
    expect(json).toMatchObject({ payments: 11, events: 69, illegal: [], by_status: { succeeded: 6, canceled: 3, error: 1, requires_payment_method: 1 } });
    const one = await cardflow("replay", "--payment", flows.payments.retry_then_cancel!, "--store", `jsonl:${file}`);
    expect(one.out).toMatch(/AuthorizationFailed\s+payment_method_requested → error/);
    expect(one.out).toContain("final: canceled; illegal transitions: none");
  });

  it("replay of the store and replay --payment agree on a stream whose last two revisions were swapped (positions left): refused, exit 1", async () => {
    const stream = `payment-${flows.payments.terminal_manual}`;
    const events = lines.map((l) => JSON.parse(l) as { stream: string; revision: number });
    const [a, b] = events.filter((e) => e.stream === stream).slice(-2) as unknown as [{ revision: number }, { revision: number }];
    [a.revision, b.revision] = [b.revision, a.revision];
    const swapped = join(dir, "swapped.jsonl");
    await writeFile(swapped, events.map((e) => JSON.stringify(e)).join("\n") + "\n");
    const all = await cardflow("replay", "--store", `jsonl:${swapped}`);
    expect(all.code).toBe(1);
    expect(all.out).toContain(`illegal transitions: 1\n  PaymentRefunded at ${stream}@${b.revision}: `);
    expect(all.out).toContain(`stored out of revision order (folded by revision): 1\n  RefundAttempted at ${stream}@${a.revision}`);
    const one = await cardflow("replay", "--payment", flows.payments.terminal_manual!, "--store", `jsonl:${swapped}`);
    expect(one.code).toBe(1);
    expect(one.out).toMatch(new RegExp(`${b.revision}\\s+PaymentRefunded\\s+REFUSED`));
  });

  it("events export | events import moves streams, and import refuses a tampered file", async () => {
    const exported = await cardflow("events", "export", "--store", `jsonl:${file}`);
    expect(exported.out).toBe(lines.join("\n") + "\n");
    const one = await cardflow("events", "export", "--payment", flows.payments.reader_manual!, "--store", `jsonl:${file}`);
    expect(one.out.trim().split("\n")).toHaveLength(6);
    const unknown = await cardflow("events", "export", "--payment", "pi_nope", "--store", `jsonl:${file}`);
    expect(unknown).toMatchObject({ code: 2, out: "" });
    expect(unknown.err).toContain(`cardflow: no payment "pi_nope" in the export ${file}`);
    const imported = await cardflow("events", "import", file, "--store", "memory");
    expect(imported).toMatchObject({ code: 0, err: "cardflow: store: an empty in-memory store\nimported 69 events in 16 streams\n" });
    // the same file again, into a SQLite store that has it: nothing appended, and said so
    const twice = `sqlite:${join(dir, "imported-twice.sqlite")}`;
    expect((await cardflow("events", "import", file, "--store", twice)).err).toContain("imported 69 events in 16 streams\n");
    expect((await cardflow("events", "import", file, "--store", twice)).err).toContain("imported 0 events in 0 streams (69 events of the file were in the store already)\n");
    const bad = join(dir, "bad.jsonl");
    await writeFile(bad, lines.map((l) => l.replace('"amount":"20.00"', '"amount":"25.00"')).join("\n"));
    const refused = await cardflow("events", "import", bad, "--store", "memory");
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(/import refused, nothing was appended:\n.*edited/);
  });

  it("as-of prints the record as it stood", async () => {
    const events = (await readFile(file, "utf8")).trim().split("\n").map((l) => JSON.parse(l)).filter((e) => e.stream === `payment-${flows.payments.terminal_manual}`);
    const { out } = await cardflow("as-of", flows.payments.terminal_manual!, events[5].metadata.timestamp, "--store", `jsonl:${file}`);
    expect(JSON.parse(out)).toMatchObject({ status: "succeeded", amount_captured: "20.00", amount_refunded: "0.00" });
    // before its first event: no record (null, as the as-of route answers), exit 0; a payment never created: exit 2
    const before = new Date(Date.parse(events[0].metadata.timestamp) - 1000).toISOString();
    const early = await cardflow("as-of", flows.payments.terminal_manual!, before, "--store", `jsonl:${file}`);
    expect({ code: early.code, out: early.out, err: withoutStoreLine(early.err) }).toEqual({ code: 0, out: "null\n", err: `cardflow: payment ${flows.payments.terminal_manual} did not exist yet at ${before}\n` });
    expect((await cardflow("as-of", "pi_never", before, "--store", `jsonl:${file}`)).code).toBe(2);
  });

  it("diagram in each format, and a payment's path", async () => {
    expect((await cardflow("diagram")).out).toMatch(/^stateDiagram-v2\n/);
    expect((await cardflow("diagram", "--format", "dot")).out).toMatch(/^digraph "payment"/);
    expect((await cardflow("diagram", "--format", "svg")).out).toContain("<svg");
    const path = await cardflow("diagram", "--payment", flows.payments.stored_card_declined!, "--store", `jsonl:${file}`);
    expect(path.out).toContain("requires_payment_method --> error : 3. AuthorizationFailed");
  });

  it("bad input: a clear message and exit 2", async () => {
    const neither = await cardflow("audit", "--store", `jsonl:${file}`);
    expect(neither).toMatchObject({ code: 2, err: "cardflow: give either a payment_id or --all\n" });
    const unknown = await cardflow("replay", "--store", "mysql:x");
    expect(unknown).toMatchObject({ code: 2, err: expect.stringMatching(/^cardflow: --store: unknown store "mysql"/) });
    // the same store given by its variable: the variable named, not an option never typed
    const saved = process.env.CARDFLOW_STORE;
    process.env.CARDFLOW_STORE = "mysql:x";
    try {
      expect(await cardflow("replay")).toMatchObject({ code: 2, err: expect.stringMatching(/^cardflow: CARDFLOW_STORE: unknown store "mysql"/) });
    } finally {
      if (saved === undefined) delete process.env.CARDFLOW_STORE;
      else process.env.CARDFLOW_STORE = saved;
    }
    const notEvents = join(dir, "not-events.jsonl");
    await writeFile(notEvents, `${lines[0]}\n{"stream":"x"}\n`);
    const malformed = await cardflow("replay", "--store", `jsonl:${notEvents}`);
    expect(malformed.code).toBe(2);
    expect(malformed.err).toMatch(/is not an event export:\n  line 2: revision:/);
    // a file that is not an export at all: its first lines named, then how many more (not thousands of lines)
    const text = join(dir, "text.jsonl");
    await writeFile(text, Array.from({ length: 1000 }, (_, i) => `line ${i}`).join("\n"));
    const textFile = await cardflow("replay", "--store", `jsonl:${text}`);
    expect(textFile.code).toBe(2);
    expect(textFile.err).toContain(`is not an event export:\n  line 1: not JSON\n  line 2: not JSON\n  line 3: not JSON\n  line 4: not JSON\n  line 5: not JSON\n  … and 995 more lines\n`);
    const missing = await cardflow("audit", "pi_nope", "--store", `jsonl:${file}`);
    expect(missing).toMatchObject({ code: 2 });
    expect(missing.err).toMatch(/pi_nope/);
    // an anchors file that is not JSON, or not a file: named, with how to make one
    const notJson = join(dir, "anchors.txt");
    await writeFile(notJson, "nope\n");
    for (const [anchors, why] of [[notJson, "is not JSON"], [dir, "is a directory, not a file"], [join(dir, "none.json"), "does not exist"]] as const) {
      const bad = await cardflow("audit", "--all", "--anchors", anchors, "--store", `jsonl:${file}`);
      expect(bad.code).toBe(2);
      expect(bad.err).toContain(`\ncardflow: --anchors: ${anchors} ${why} (save anchors with: cardflow events heads > heads.json)`);
    }
    // an export that is a directory: said so, not EISDIR
    const notExport = await cardflow("audit", "--all", "--store", `jsonl:${dir}`);
    expect(notExport.code).toBe(2);
    expect(notExport.err).toContain(`cardflow: --store: jsonl:${dir} is a directory, not a file`);
  });

  it("says which store it used; without --store, the service's own store (DATA_DIR), refused while it does not exist", async () => {
    const before = process.env.DATA_DIR;
    const dataDir = join(dir, "service-data");
    process.env.DATA_DIR = dataDir;
    try {
      const absent = await cardflow("replay", "--json");
      expect(absent).toMatchObject({ code: 2, out: "" });
      expect(absent.err).toContain(`cardflow: no store at ${join(dataDir, "cardflow.sqlite")}`);
      expect(existsSync(dataDir)).toBe(false);
      // accounts create opens the store (it writes); then read-only commands read it
      expect((await cardflow("accounts", "create", "acct_x")).code).toBe(0);
      const { out, err, code } = await cardflow("replay", "--json");
      expect(code).toBe(0);
      expect(err).toBe(`cardflow: store: SQLite ${join(dataDir, "cardflow.sqlite")}\n`);
      expect(JSON.parse(out)).toMatchObject({ payments: 0, illegal: [] });
    } finally {
      if (before === undefined) delete process.env.DATA_DIR;
      else process.env.DATA_DIR = before;
    }
  });

  it("read-only commands refuse a store that does not exist, creating nothing", async () => {
    const typo = join(dir, "data", "cardflw.sqlite");
    for (const args of [["audit", "--all"], ["replay"], ["events", "export"], ["events", "heads"], ["as-of", "pi_1", "2026-01-01T00:00:00Z"], ["diagram", "--payment", "pi_1"], ["audit", "pi_1"]]) {
      const refused = await cardflow(...args, "--store", `sqlite:${typo}`);
      expect(refused, args.join(" ")).toMatchObject({ code: 2, out: "" });
      expect(refused.err).toBe(`cardflow: --store: no SQLite store at ${typo}; nothing was created (check the path)\n`);
    }
    expect(existsSync(join(dir, "data"))).toBe(false);
    const nowhere = await cardflow("audit", "--all", "--store", "sqlite:/nonexistent-cardflow/x.sqlite");
    expect(nowhere.code).toBe(2);
    expect(existsSync("/nonexistent-cardflow")).toBe(false);
    expect((await cardflow("replay", "--store", `jsonl:${join(dir, "nope.jsonl")}`)).err).toMatch(/no export file at/);
    // a store that exists but lacks the payment: named with the store, not "for this account"
    const missing = await cardflow("audit", "pi_nope", "--store", `jsonl:${file}`);
    expect(missing.err).toMatch(/cardflow: no payment "pi_nope" in the export .*events\.jsonl/);
    expect(missing.err).not.toContain("for this account");
  });

  it("usage errors exit 2, as documented; --help and --version exit 0", async () => {
    for (const args of [["audit", "--bogus"], ["diagram", "--format", "png"], ["as-of"], ["frobnicate"], ["accounts", "create"], []]) {
      const { code, out, err } = await cardflow(...args);
      expect(code, args.join(" ")).toBe(2);
      expect(out).toBe("");
      expect(err).toMatch(/error: |Usage: /);
      // the error and a pointer to --help, not the whole help under it (no command at all: the help)
      if (args.length > 0) expect(err, args.join(" ")).toMatch(/^error: .*\n(.*\n)?\(add --help for usage\)\n$/);
    }
    const version = await cardflow("--version");
    expect(version).toMatchObject({ code: 0, out: `${JSON.parse(await readFile("package.json", "utf8")).version}\n` });
    expect((await cardflow("audit", "--help")).code).toBe(0);
  });

  it("every command has a description", () => {
    const walk = (command: Command): Command[] => [command, ...command.commands.flatMap(walk)];
    for (const command of walk(createProgram())) expect(command.description(), command.name()).not.toBe("");
  });

  it("npx cardflow --help from the repository root documents every command", async () => {
    const root = new URL("../..", import.meta.url).pathname;
    const { stdout } = await promisify(execFile)("npx", ["cardflow", "--help"], { cwd: root, env: { ...process.env, CARDFLOW_STORE: "" } });
    for (const command of ["replay", "audit", "as-of", "events", "diagram", "machine"]) expect(stdout).toMatch(new RegExp(`^  ${command} `, "m"));
    const events = await promisify(execFile)("npx", ["cardflow", "events", "--help"], { cwd: root });
    expect(events.stdout).toMatch(/export .*\n.*import/s);
  });
});
