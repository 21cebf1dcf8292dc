import { execFile } from "node:child_process";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { exportEvents } from "../../src/audit/transfer.js";
import { runFlows, type Flows } from "./flows.js";
import { cardflow, cardflowOn } from "./run-cli.js";

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
    expect(err).toMatch(/^\rreplaying .* 69 events · 16 streams · [\d,]+ events\/s\r\x1b\[2K$/);
    expect(out).toContain("illegal transitions: none");
    expect((await cardflowOn({ interactive: true }, "audit", "--all", "--no-progress", "--store", `jsonl:${file}`)).err).toBe("");
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

  it("events heads saves anchors; audit --all --anchors finds a truncated stream", async () => {
    const heads = await cardflow("events", "heads", "--store", `jsonl:${file}`);
    const anchors = join(dir, "heads.json");
    await writeFile(anchors, heads.out);
    expect(Object.keys(JSON.parse(heads.out))).toContain(`payment-${flows.payments.terminal_manual}`);
    const truncated = join(dir, "truncated.jsonl");
    const last = lines.map((l) => JSON.parse(l).stream).lastIndexOf(`payment-${flows.payments.terminal_manual}`);
    await writeFile(truncated, lines.filter((_, i) => i !== last).join("\n"));
    expect((await cardflow("audit", "--all", "--store", `jsonl:${truncated}`)).code).toBe(0);
    const { out, code } = await cardflow("audit", "--all", "--anchors", anchors, "--store", `jsonl:${truncated}`);
    expect(code).toBe(1);
    expect(out).toMatch(/\[anchor_missing\] payment-pi_\w+ no longer holds its anchored head/);
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

  it("events export | events import moves streams, and import refuses a tampered file", async () => {
    const exported = await cardflow("events", "export", "--store", `jsonl:${file}`);
    expect(exported.out).toBe(lines.join("\n") + "\n");
    const one = await cardflow("events", "export", "--payment", flows.payments.reader_manual!, "--store", `jsonl:${file}`);
    expect(one.out.trim().split("\n")).toHaveLength(6);
    const imported = await cardflow("events", "import", file, "--store", "memory");
    expect(imported).toMatchObject({ code: 0, err: "imported 69 events in 16 streams\n" });
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
    const notEvents = join(dir, "not-events.jsonl");
    await writeFile(notEvents, `${lines[0]}\n{"stream":"x"}\n`);
    const malformed = await cardflow("replay", "--store", `jsonl:${notEvents}`);
    expect(malformed.code).toBe(2);
    expect(malformed.err).toMatch(/is not an event export:\n  line 2: revision:/);
    const missing = await cardflow("audit", "pi_nope", "--store", `jsonl:${file}`);
    expect(missing).toMatchObject({ code: 2 });
    expect(missing.err).toMatch(/pi_nope/);
  });

  it("without --store, reads the service's own store (DATA_DIR)", async () => {
    const before = process.env.DATA_DIR;
    process.env.DATA_DIR = join(dir, "service-data");
    try {
      const { out, code } = await cardflow("replay", "--json");
      expect(code).toBe(0);
      expect(JSON.parse(out)).toMatchObject({ payments: 0, illegal: [] });
    } finally {
      if (before === undefined) delete process.env.DATA_DIR;
      else process.env.DATA_DIR = before;
    }
  });

  it("npx cardflow --help from the repository root documents every command", async () => {
    const root = new URL("../..", import.meta.url).pathname;
    const { stdout } = await promisify(execFile)("npx", ["cardflow", "--help"], { cwd: root, env: { ...process.env, CARDFLOW_STORE: "" } });
    for (const command of ["replay", "audit", "as-of", "events", "diagram"]) expect(stdout).toMatch(new RegExp(`^  ${command} `, "m"));
    const events = await promisify(execFile)("npx", ["cardflow", "events", "--help"], { cwd: root });
    expect(events.stdout).toMatch(/export .*\n.*import/s);
  });
});
