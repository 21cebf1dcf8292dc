// Transition diagrams generated from the machine definition itself (paymentMachine.root): every
// state, every transition with its event and guard, the initial and final states. Mermaid for
// GitHub, DOT for Graphviz, SVG rendered by Graphviz compiled to WebAssembly (no system package).
// With a payment's events, the path it took is highlighted and its steps numbered.
import { finalStates, machineStates, machineTransitions, type MachineTransition } from "../../machines/transitions.js";
import { paymentMachine } from "../../machines/payment.js";
import { replay } from "./replay.js";
import { toCompactDot } from "./diagram-compact.js";
import type { RecordedEvent } from "../store/port.js";

export interface MachineGraph {
  id: string;
  initial: string;
  /** Tags are the machine's own (e.g. awaiting_processor): drawn under the state's name. */
  states: { id: string; final: boolean; tags: string[] }[];
  transitions: MachineTransition[];
}

/** The payment machine's states and transitions, in definition order (machines/transitions.ts). */
export function machineGraph(): MachineGraph {
  const finals = new Set(finalStates());
  const initial = paymentMachine.root.initial?.target?.[0]?.key;
  if (!initial) throw new Error("the machine has no initial state");
  const tagsOf = (id: string): string[] => [...(paymentMachine.root.states[id]?.tags ?? [])];
  const states = machineStates().map((id) => ({ id, final: finals.has(id), tags: tagsOf(id) }));
  return { id: paymentMachine.id, initial, states, transitions: machineTransitions() };
}

/** Which transitions a payment took, in order (events the machine refused are left out). */
export function pathOf(graph: MachineGraph, events: readonly RecordedEvent[]): Map<number, number[]> {
  const steps = new Map<number, number[]>();
  let n = 0;
  for (const step of replay(events).steps) {
    if (!step.allowed) continue;
    n++;
    const index = graph.transitions.findIndex((t) => t.source === step.status_before && t.event === step.type && t.target === step.state.status);
    if (index >= 0) steps.set(index, [...(steps.get(index) ?? []), n]);
  }
  return steps;
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
}

/** The event, with its guards; `else` for an unguarded branch after guarded ones of the same event. */
function label(t: MachineTransition, i: number, all: MachineTransition[]): string {
  if (t.guards.length) return `${t.event} [${t.guards.join(" and ")}]`;
  const fallback = all.slice(0, i).some((o) => o.source === t.source && o.event === t.event);
  return fallback ? `${t.event} [else]` : t.event;
}
const numbered = (steps: number[] | undefined, text: string) => (steps ? `${steps.join(", ")}. ${text}` : text);

export function toMermaid(graph: MachineGraph, path?: Map<number, number[]>, title?: string): string {
  const lines = [...(title ? ["---", `title: ${title}`, "---"] : []), "stateDiagram-v2", `  [*] --> ${graph.initial}`];
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
    const attrs = [`label=${q(numbered(steps, label(t, i, all)))}`, ...(steps ? [`color="#d9480f"`, `fontcolor="#d9480f"`, "penwidth=2.5"] : [])];
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
export async function diagram({ format = "mermaid", path, title, layout = "full" }: DiagramOptions = {}): Promise<string> {
  const graph = machineGraph();
  const taken = path ? pathOf(graph, path) : undefined;
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
    `domain event, with its guard in brackets; \`else\` is the branch taken when the guards before it fail.`,
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
