// Transition diagrams generated from the machine definition itself (paymentMachine.root): every
// state, every transition with its event and guard, the initial and final states. Mermaid for
// GitHub, DOT for Graphviz, SVG rendered by Graphviz compiled to WebAssembly (no system package).
// With a payment's events, the path it took is highlighted and its steps numbered (as the audit
// folds them: a step only an earlier machine allowed is drawn as that machine had it).
import { finalStates, machineStates, machineTransitions, type MachineTransition } from "../../machines/transitions.js";
import { paymentMachine } from "../../machines/payment.js";
import { auditReplay, type MachineDefinitions } from "./machine-history.js";
import { toCompactDot } from "./diagram-compact.js";
import type { RecordedEvent } from "../store/port.js";

export interface MachineGraph {
  id: string;
  initial: string;
  /** Tags are the machine's own (e.g. awaiting_processor): drawn under the state's name. */
  states: { id: string; final: boolean; tags: string[] }[];
  transitions: PathTransition[];
}

/** A transition of the machine, or one a payment took that only an earlier machine had (`earlier`: its version). */
export type PathTransition = MachineTransition & { earlier?: string };

/** The payment machine's states and transitions, in definition order (machines/transitions.ts). */
export function machineGraph(): MachineGraph {
  const finals = new Set(finalStates());
  const initial = paymentMachine.root.initial?.target?.[0]?.key;
  if (!initial) throw new Error("the machine has no initial state");
  const tagsOf = (id: string): string[] => [...(paymentMachine.root.states[id]?.tags ?? [])];
  const states = machineStates().map((id) => ({ id, final: finals.has(id), tags: tagsOf(id) }));
  return { id: paymentMachine.id, initial, states, transitions: machineTransitions() };
}

/**
 * Which transitions a payment took, each event numbered by its place in the stream, as the audit
 * folds it (./machine-history.ts: an event today's machine refuses is folded by the machine that
 * decided it, if that one allowed it). A step on a transition today's machine lacks is drawn on
 * that transition, added to the graph (`earlier`); an event no machine allowed is not drawn. Each
 * step not drawn as today's machine would is said in `notes`.
 */
export function pathOf(graph: MachineGraph, events: readonly RecordedEvent[], machines?: MachineDefinitions): { graph: MachineGraph; steps: Map<number, number[]>; notes: string[] } {
  const transitions = [...graph.transitions];
  const steps = new Map<number, number[]>();
  const notes: string[] = [];
  auditReplay(events, machines).steps.forEach((step, i) => {
    const [n, source, target] = [i + 1, step.status_before, step.state.status];
    const name = `step ${n} (${step.type} at rev ${step.revision})`;
    if (!step.allowed) return void notes.push(`${name} is not drawn: ${step.refusal!.message} (cardflow audit explains it)`);
    let index = transitions.findIndex((t) => t.source === source && t.event === step.type && t.target === target);
    if (index < 0 && step.allowed_by_machine) {
      index = transitions.push({ id: `${source} --${step.type}--> ${target}`, source, event: step.type, target, guards: [], earlier: step.allowed_by_machine }) - 1;
      notes.push(`${name}: ${source} → ${target} is not a transition of today's machine; drawn as machine ${step.allowed_by_machine} allowed it at the time (dashed)`);
    } else if (step.allowed_by_machine) notes.push(`${name}: today's machine refuses it here; machine ${step.allowed_by_machine} allowed it at the time`);
    if (index >= 0) steps.set(index, [...(steps.get(index) ?? []), n]);
    else notes.push(`${name} is not drawn: ${source} → ${target} is not a transition of today's machine`);
  });
  return { graph: { ...graph, transitions }, steps, notes };
}

export type DiagramFormat = "mermaid" | "dot" | "svg";

export interface DiagramOptions {
  format?: DiagramFormat;
  /** A payment's events: its path is highlighted and numbered. */
  path?: readonly RecordedEvent[];
  /** Title of the diagram (e.g. the payment id). */
  title?: string;
  /** `compact`: top to bottom, one arrow per pair of states, guards as tooltips (./diagram-compact.ts; the web console's). Default `full`. */
  layout?: "full" | "compact";
  /** Told each step of `path` not drawn as today's machine would draw it, and why (pathOf's notes). */
  onNote?: (note: string) => void;
  /** Definitions of the machine versions events may name (default: the package's docs/machines/<hash>.json). */
  machines?: MachineDefinitions;
}

/** The event, with its guards; `else` for an unguarded branch after guarded ones of the same event. */
function label(t: PathTransition, i: number, all: PathTransition[]): string {
  if (t.earlier) return `${t.event} [allowed by machine ${t.earlier} at the time, not in today's machine]`;
  if (t.guards.length) return `${t.event} [${t.guards.join(" and ")}]`;
  const fallback = all.slice(0, i).some((o) => o.source === t.source && o.event === t.event);
  return fallback ? `${t.event} [else]` : t.event;
}
const numbered = (steps: number[] | undefined, text: string) => (steps ? `${steps.join(", ")}. ${text}` : text);

/** Mermaid's front matter naming the diagram: YAML, so the title is quoted (a ": " in it would end the key's value). */
export const mermaidTitle = (title: string) => ["---", `title: ${JSON.stringify(title)}`, "---"];

export function toMermaid(graph: MachineGraph, path?: Map<number, number[]>, title?: string): string {
  const lines = [...(title ? mermaidTitle(title) : []), "stateDiagram-v2", `  [*] --> ${graph.initial}`];
  graph.transitions.forEach((t, i, all) => lines.push(`  ${t.source} --> ${t.target} : ${numbered(path?.get(i), label(t, i, all))}`));
  for (const s of graph.states) if (s.final) lines.push(`  ${s.id} --> [*]`);
  for (const s of graph.states) if (s.tags.length) lines.push(`  ${s.id} : ${s.tags.join(", ")}`);
  if (path) {
    const visited = new Set([graph.initial, ...[...path.keys()].map((i) => graph.transitions[i]!.target)]);
    lines.push("  classDef visited fill:#ffe8cc,stroke:#d9480f,stroke-width:2px", `  class ${[...visited].join(",")} visited`);
  }
  return lines.join("\n") + "\n";
}

export function toDot(graph: MachineGraph, path?: Map<number, number[]>, title?: string): string {
  const q = (s: string) => JSON.stringify(s);
  const visited = path ? new Set([graph.initial, ...[...path.keys()].map((i) => graph.transitions[i]!.target)]) : new Set<string>();
  const lines = [
    `digraph ${q(graph.id)} {`,
    ...(title ? [`  label=${q(title)}; labelloc=t; fontname="Helvetica";`] : []),
    `  rankdir=LR;`,
    `  node [shape=box, style=rounded, fontname="Helvetica"];`,
    `  edge [fontname="Helvetica", fontsize=10];`,
    `  "__initial" [shape=point, width=0.15, label=""];`,
    `  "__initial" -> ${q(graph.initial)};`,
  ];
  for (const s of graph.states) {
    const label = s.tags.length ? [`label=${q(`${s.id}\n(${s.tags.join(", ")})`)}`] : [];
    const attrs = [...label, ...(s.final ? ["peripheries=2"] : []), ...(visited.has(s.id) ? [`style="rounded,filled"`, `fillcolor="#ffe8cc"`, `color="#d9480f"`] : [])];
    lines.push(`  ${q(s.id)}${attrs.length ? ` [${attrs.join(", ")}]` : ""};`);
  }
  graph.transitions.forEach((t, i, all) => {
    const steps = path?.get(i);
    const attrs = [`label=${q(numbered(steps, label(t, i, all)))}`, ...(steps ? [`color="#d9480f"`, `fontcolor="#d9480f"`, "penwidth=2.5"] : []), ...(t.earlier ? ["style=dashed"] : [])];
    lines.push(`  ${q(t.source)} -> ${q(t.target)} [${attrs.join(", ")}];`);
  });
  lines.push("}");
  return lines.join("\n") + "\n";
}

let graphviz: Promise<{ dot(src: string): string }> | undefined;

/** Renders DOT to SVG with Graphviz compiled to WebAssembly (@hpcc-js/wasm-graphviz). */
export async function dotToSvg(dot: string): Promise<string> {
  graphviz ??= import("@hpcc-js/wasm-graphviz").then((m) => m.Graphviz.load());
  return (await graphviz).dot(dot);
}

/** The machine's diagram, optionally with a payment's path highlighted and numbered. */
export async function diagram({ format = "mermaid", path, title, layout = "full", onNote, machines }: DiagramOptions = {}): Promise<string> {
  const drawn = path ? pathOf(machineGraph(), path, machines) : undefined;
  for (const note of drawn?.notes ?? []) onNote?.(note);
  const graph = drawn?.graph ?? machineGraph();
  const taken = drawn?.steps;
  if (format === "mermaid") return toMermaid(graph, taken, title);
  const dot = layout === "compact" ? toCompactDot(graph, taken) : toDot(graph, taken, title);
  return format === "dot" ? dot : dotToSvg(dot);
}

/** The committed docs: docs/payment-machine.md (Mermaid, GitHub renders it) and docs/payment-machine.svg. */
export async function machineDocs(): Promise<{ markdown: string; svg: string }> {
  const graph = machineGraph();
  const markdown = [
    "# The payment machine",
    "",
    "<!-- generated from machines/payment.ts by `npm run diagrams`; test/audit/diagram.test.ts fails when this file is stale -->",
    "",
    `States and transitions of the payment intent, generated from the XState machine itself. Each arrow is a`,
    `domain event, with its guards in brackets. Of several arrows on one event from one state, the first whose`,
    `guards hold is taken, in the machine's order: a later one, drawn with its own guards only, is taken when those before it fail.`,
    `Under a state's name: its tags in the machine (\`awaiting_processor\`: only a processor's report moves it on).`,
    `Initial state: \`${graph.initial}\`; final: ${graph.states.filter((s) => s.final).map((s) => `\`${s.id}\``).join(", ")}.`,
    `A payment's own path: \`cardflow diagram --payment <id>\`. SVG: [payment-machine.svg](payment-machine.svg).`,
    "",
    "```mermaid",
    toMermaid(graph).trimEnd(),
    "```",
    "",
  ].join("\n");
  return { markdown, svg: await dotToSvg(toDot(graph)) };
}
