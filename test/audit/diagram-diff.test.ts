// `cardflow diagram --diff` (issue 30): today's machine against a base with known changes (a
// transition it lacks, two it has more, one with other guards, a state more, a state with other
// tags, a guard more, one less, an event at another version), every mark checked in each format;
// a git ref's docs/machine.json, and the refusals (not a ref, a ref without docs/machine.json, not
// a definition, markdown without --diff).
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { machineDefinition, machineHash, machineJson, type MachineDefinition } from "../../machines/definition.js";
import { cardflow } from "./run-cli.js";

const dir = mkdtempSync(join(tmpdir(), "cardflow-diff-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const head = machineDefinition();
const base: MachineDefinition = structuredClone(head);
const savedBeforeCapture = head.transitions.find((t) => t.source === "requires_capture" && t.event === "CardSaved")!;
base.transitions = base.transitions.filter((t) => t !== base.transitions.find((b) => b.source === "requires_capture" && b.event === "CardSaved"));
base.transitions.push(
  { source: "succeeded", event: "PaymentCanceled", target: "canceled", guards: ["answersAttempt"], actions: ["releaseAuthorization", "closeAttempt"] },
  { source: "succeeded", event: "PaymentDisputed", target: "disputed", guards: ["isDisputable"], actions: [] },
);
base.transitions.find((t) => t.source === "succeeded" && t.event === "PaymentRefunded")!.guards = ["answersAttempt", "isManualCapture"];
base.states.push({ id: "disputed", final: false, tags: [] });
base.states.find((s) => s.id === "succeeded")!.tags = ["refundable"];
base.guards = [...base.guards.filter((g) => g !== "withinRefundable"), "isDisputable"].sort();
base.events.push({ type: "PaymentDisputed", version: 1 });
base.events.find((e) => e.type === "PaymentRefunded")!.version = 2;
const baseFile = join(dir, "base.json");
writeFileSync(baseFile, machineJson(base));
const [B, H] = [machineHash(base), machineHash(head)];

describe("cardflow diagram --diff FILE", () => {
  it("--format markdown: a summary table with every change", async () => {
    const { out, code } = await cardflow("diagram", "--diff", baseFile, "--format", "markdown");
    expect(code).toBe(0);
    const g = (xs: string[]) => xs.map((x) => `\`${x}\``).join(", ");
    expect(out).toBe(
      [
        `### Payment machine: \`${B}\` → \`${H}\``,
        "",
        "2 added, 5 removed, 3 changed.",
        "",
        "| change | what | name | details |",
        "|---|---|---|---|",
        "| changed | state | `succeeded` | tags: `refundable` → none |",
        "| removed | state | `disputed` |  |",
        `| added | transition | \`requires_capture --CardSaved--> requires_capture\` | guards: ${g(savedBeforeCapture.guards)} |`,
        "| changed | transition | `succeeded --PaymentRefunded--> succeeded` | guards: `answersAttempt`, `+withinRefundable`, `-isManualCapture` |",
        "| removed | transition | `succeeded --PaymentCanceled--> canceled` | guards: `answersAttempt` |",
        "| removed | transition | `succeeded --PaymentDisputed--> disputed` | guards: `isDisputable` |",
        "| added | guard | `withinRefundable` |  |",
        "| removed | guard | `isDisputable` |  |",
        "| changed | event | `PaymentRefunded` | schema version 2 → 1 |",
        "| removed | event | `PaymentDisputed` | version 1 |",
        "",
      ].join("\n"),
    );
  });

  it("mermaid: the union of both machines, each changed edge signed, changed states classed", async () => {
    const { out } = await cardflow("diagram", "--diff", baseFile);
    const lines = out.split("\n");
    expect(lines.slice(0, 5)).toEqual(["---", `title: "machine ${B} → ${H}: + added, - removed, ~ changed"`, "---", "stateDiagram-v2", "  [*] --> none"]);
    // the front matter is YAML, as Mermaid reads it: the legend's ": " quoted, not a mapping gone wrong
    expect(parseYaml(lines[1]!)).toEqual({ title: `machine ${B} → ${H}: + added, - removed, ~ changed` });
    expect(lines).toContain(`  requires_capture --> requires_capture : + CardSaved [${savedBeforeCapture.guards.join(" and ")}]`);
    expect(lines).toContain("  succeeded --> succeeded : ~ PaymentRefunded [answersAttempt and +withinRefundable and -isManualCapture]");
    expect(lines).toContain("  succeeded --> canceled : - PaymentCanceled [answersAttempt]");
    expect(lines).toContain("  succeeded --> disputed : - PaymentDisputed [isDisputable]");
    expect(lines).toContain("  classDef removed stroke:#c92a2a,stroke-width:3px,stroke-dasharray:5 5");
    expect(lines).toContain("  class disputed removed");
    expect(lines).toContain("  class succeeded changed");
    // every other transition of the union unmarked, once
    const edges = lines.filter((l) => / --> (?!\[\*\])\w+ : /.test(l) && !l.includes("[*]"));
    expect(edges).toHaveLength(head.transitions.length + 2);
    expect(edges.filter((l) => / : [+~-] /.test(l))).toHaveLength(4);
  });

  it("dot and svg: added green, removed red and dashed, changed orange", async () => {
    const dot = (await cardflow("diagram", "--diff", baseFile, "--format", "dot")).out;
    expect(dot).toContain(`"requires_capture" -> "requires_capture" [label="+ CardSaved [${savedBeforeCapture.guards.join(" and ")}]", color="#2b8a3e", fontcolor="#2b8a3e", penwidth=2.5];`);
    expect(dot).toContain(`"succeeded" -> "canceled" [label="- PaymentCanceled [answersAttempt]", color="#c92a2a", fontcolor="#c92a2a", penwidth=2.5, style=dashed];`);
    expect(dot).toContain(`"succeeded" -> "succeeded" [label="~ PaymentRefunded [answersAttempt and +withinRefundable and -isManualCapture]", color="#e67700", fontcolor="#e67700", penwidth=2.5];`);
    expect(dot).toContain(`"disputed" [label="- disputed", color="#c92a2a", fontcolor="#c92a2a", penwidth=2.5, style="rounded,dashed"];`);
    expect(dot).toContain(`"none" -> "requires_payment_method" [label="PaymentIntentCreated", color="#868e96", fontcolor="#868e96"];`);
    const svg = (await cardflow("diagram", "--diff", baseFile, "--format", "svg")).out;
    expect(svg).toMatch(/^<\?xml[\s\S]*<svg[\s\S]*<\/svg>\s*$/);
    // Graphviz writes a hyphen as &#45;
    for (const text of ["+ CardSaved", "&#45; PaymentCanceled", "~ PaymentRefunded", "&#45; disputed", "#2b8a3e", "#c92a2a", "#e67700"]) expect(svg).toContain(text);
  });

  it("the same machine: no change", async () => {
    const same = join(dir, "same.json");
    writeFileSync(same, machineJson(head));
    expect((await cardflow("diagram", "--diff", same, "--format", "markdown")).out).toBe(`### Payment machine: \`${H}\` → \`${H}\`\n\nNo change to states, transitions, guards or events.\n`);
    expect((await cardflow("diagram", "--diff", same)).out).not.toMatch(/ : [+~-] /);
  });
});

describe("cardflow diagram --diff REF", () => {
  const git = (...args: string[]) => execFileSync("git", args, { cwd: new URL("../..", import.meta.url).pathname, encoding: "utf8" }).trim();

  it("reads docs/machine.json at a git ref: the same as the file it holds", async () => {
    const added = git("log", "--diff-filter=A", "--format=%H", "--", "docs/machine.json").split("\n").at(-1)!;
    expect(added).toMatch(/^[0-9a-f]{40}$/);
    const file = join(dir, "at-ref.json");
    writeFileSync(file, git("show", `${added}:docs/machine.json`) + "\n");
    for (const format of ["markdown", "mermaid", "dot"]) {
      const byRef = await cardflow("diagram", "--diff", added, "--format", format);
      expect(byRef.code, byRef.err).toBe(0);
      expect(byRef.out).toBe((await cardflow("diagram", "--diff", file, "--format", format)).out);
    }
  });

  it("refuses, naming the problem: not a ref, a ref without docs/machine.json, not a definition, markdown without --diff", async () => {
    expect(await cardflow("diagram", "--diff", "no-such-ref-or-file")).toMatchObject({ code: 2, out: "", err: "cardflow: --diff: no-such-ref-or-file is neither a file, a release (docs/machines/releases.json: v0.1.0) nor a git ref of this repository\n" });
    const root = git("rev-list", "--max-parents=0", "HEAD").split("\n")[0]!;
    expect(await cardflow("diagram", "--diff", root)).toMatchObject({ code: 2, err: `cardflow: --diff: ${root} has no docs/machine.json (commits before machine export have none: name a release instead, e.g. v0.1.0)\n` });
    const bad = join(dir, "bad.json");
    writeFileSync(bad, JSON.stringify({ ...head, transitions: [{ source: "a" }] }));
    expect((await cardflow("diagram", "--diff", bad)).err).toMatch(/^cardflow: --diff: .*bad\.json is not a machine definition \(`cardflow machine export`\): transitions\.0\.event: /);
    // a transition to a state the definition never declares: no machine
    const undeclared = join(dir, "undeclared.json");
    writeFileSync(undeclared, JSON.stringify({ ...head, transitions: [...head.transitions, { ...head.transitions[0]!, target: "nowhere" }] }));
    expect(await cardflow("diagram", "--diff", undeclared)).toMatchObject({ code: 2, out: "", err: expect.stringMatching(new RegExp(`transitions\\.${head.transitions.length}\\.target: names state "nowhere", which states does not declare\\n$`)) });
    expect(await cardflow("diagram", "--format", "markdown")).toMatchObject({ code: 2, err: "cardflow: --format markdown is the summary of --diff: give --diff <ref-or-file>\n" });
    expect((await cardflow("diagram", "--diff", baseFile, "--payment", "pi_1")).err).toBe("cardflow: give either --payment or --diff\n");
  });
});

describe("cardflow diagram --diff RELEASE", () => {
  const root = new URL("../..", import.meta.url).pathname;
  const releases = JSON.parse(readFileSync(join(root, "docs/machines/releases.json"), "utf8")) as Record<string, string>;

  it("every release's machine is kept: each golden-streams release is listed, its definition in docs/machines/ under its hash", () => {
    expect(Object.keys(releases).sort()).toEqual(readdirSync(join(root, "test/fixtures/streams")).filter((f) => /^v\d/.test(f)).sort());
    for (const [release, hash] of Object.entries(releases)) {
      const kept = JSON.parse(readFileSync(join(root, "docs/machines", `${hash}.json`), "utf8")) as MachineDefinition;
      expect(machineHash(kept), release).toBe(hash);
    }
  });

  it("compares with a release's kept machine, the same as with its file", async () => {
    for (const [release, hash] of Object.entries(releases)) {
      for (const format of ["markdown", "mermaid"]) {
        const byRelease = await cardflow("diagram", "--diff", release, "--format", format);
        expect(byRelease.code, byRelease.err).toBe(0);
        expect(byRelease.out).toBe((await cardflow("diagram", "--diff", join(root, "docs/machines", `${hash}.json`), "--format", format)).out);
      }
      expect((await cardflow("diagram", "--diff", release, "--format", "markdown")).out).toMatch(new RegExp(`^### Payment machine: \`${hash}\` → \`${H}\``));
    }
  });
});
