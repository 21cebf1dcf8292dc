// `cardflow diagram`: the payment machine's transition diagram, generated from the machine; with
// --payment, the path that payment took highlighted and numbered; with --diff, the union of this
// machine and another (a file written by `cardflow machine export`, a release's machine kept in
// docs/machines/, or a git ref's docs/machine.json) with what changed marked, or (--format
// markdown) a summary table.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import { Option } from "commander";
import { machineDefinition, type MachineDefinition } from "../../machines/definition.js";
import { diagram, type DiagramFormat } from "../audit/diagram.js";
import { diffDiagram } from "../audit/diagram-diff.js";
import { diffMachines, MachineDefinitionSchema, markdownDiff } from "../audit/machine-diff.js";
import { InvalidRequest, NotFound } from "../errors.js";
import { packageRoot } from "../package-root.js";
import { action, processIo, type CliIo } from "./io.js";
import { READS, storeOption, withStore } from "./store-option.js";

const installed = () => packageRoot.split(/[\\/]/).includes("node_modules");

const MACHINES_DIR = join(packageRoot, "docs", "machines");
/** The releases whose machines the package keeps: name -> machine version. */
const releases = (): Record<string, string> => {
  const file = join(MACHINES_DIR, "releases.json");
  return existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as Record<string, string>) : {};
};
/**
 * Each release's machine version (docs/machines/releases.json), whose definition the package keeps
 * (docs/machines/<hash>.json): a release is compared with in a checkout and installed alike, tags
 * or not (release 0.1.0's commit predates docs/machine.json).
 */
function releaseMachine(spec: string): { file: string; hash: string } | undefined {
  const known = releases();
  const hash = Object.hasOwn(known, spec) ? known[spec] : undefined;
  return hash === undefined ? undefined : { file: join(MACHINES_DIR, `${hash}.json`), hash };
}

/** The machine to compare with: a definition file, a release's kept machine, or docs/machine.json at a git ref of this repository. */
export function baseMachine(spec: string): MachineDefinition {
  let text: string;
  let from: string;
  const isFile = existsSync(spec) && statSync(spec).isFile();
  const release = isFile ? undefined : releaseMachine(spec);
  if (isFile) {
    text = readFileSync(spec, "utf8");
    from = spec;
  } else if (release) {
    text = readFileSync(release.file, "utf8");
    from = `${spec}'s machine ${release.hash}`;
  } else {
    if (installed()) throw new InvalidRequest(`--diff: no file or release ${spec}; an installed cardflow compares with a release (docs/machines/releases.json) or a file (e.g. \`git show main:docs/machine.json > base.json\` in your checkout, then --diff base.json)`, "diff");
    const git = (...args: string[]) => execFileSync("git", args, { cwd: packageRoot, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
    const isRef = !spec.startsWith("-") && (() => {
      try {
        git("rev-parse", "--verify", "--quiet", `${spec}^{commit}`);
        return true;
      } catch {
        return false;
      }
    })();
    if (!isRef) throw new InvalidRequest(`--diff: ${spec} is neither a file, a release (docs/machines/releases.json: ${Object.keys(releases()).join(", ")}) nor a git ref of this repository`, "diff");
    try {
      text = git("show", `${spec}:docs/machine.json`);
    } catch {
      throw new InvalidRequest(`--diff: ${spec} has no docs/machine.json (commits before machine export have none: name a release instead, e.g. v0.1.0)`, "diff");
    }
    from = `${spec}:docs/machine.json`;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new InvalidRequest(`--diff: ${from} is not JSON`, "diff");
  }
  const parsed = MachineDefinitionSchema.safeParse(json);
  if (!parsed.success) throw new InvalidRequest(`--diff: ${from} is not a machine definition (\`cardflow machine export\`): ${parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ")}`, "diff");
  return parsed.data as MachineDefinition;
}

export function registerDiagram(program: Command, io: CliIo = processIo): void {
  program
    .command("diagram")
    .summary("the machine's transition diagram (mermaid, dot, svg); a payment's path with --payment; what changed with --diff")
    .description(
      "the payment machine's transition diagram, generated from the machine definition (states, events, guards, initial and final states); --payment highlights a payment's path; --diff draws the union of this machine and another with added, removed and changed transitions, states and guards marked (--format markdown: a summary table for a pull-request comment)",
    )
    .addOption(new Option("--format <format>", "output format (markdown: with --diff only)").choices(["mermaid", "dot", "svg", "markdown"]).default("mermaid"))
    .option("--payment <id>", "highlight and number the path this payment took (reads --store)")
    .option("--diff <ref-or-file>", "compare with another machine: a file written by `cardflow machine export`, a release (e.g. v0.1.0: its machine kept in docs/machines/), or a git ref whose docs/machine.json to read (in a checkout of the repository)")
    .addOption(storeOption())
    .action(
      action(io, async (opts: { format: DiagramFormat | "markdown"; payment?: string; diff?: string; store?: string }) => {
        if (opts.diff !== undefined) {
          if (opts.payment !== undefined) throw new InvalidRequest("give either --payment or --diff", "diff");
          const diff = diffMachines(baseMachine(opts.diff), machineDefinition());
          return void io.out(opts.format === "markdown" ? markdownDiff(diff) : await diffDiagram(diff, opts.format));
        }
        if (opts.format === "markdown") throw new InvalidRequest("--format markdown is the summary of --diff: give --diff <ref-or-file>", "format");
        const format = opts.format;
        if (opts.payment === undefined) return void io.out(await diagram({ format }));
        const paymentId = opts.payment;
        await withStore(io, opts.store, READS, async ({ store }) => {
          const path = await store.readStream(`payment-${paymentId}`);
          if (path.length === 0) throw new NotFound("payment", paymentId, "payment");
          // a step not drawn as today's machine has it is said, not left out silently
          io.out(await diagram({ format, path, title: `payment ${paymentId}`, onNote: (note) => io.err(`cardflow: payment ${paymentId}: ${note}\n`) }));
        });
      }),
    );
}
