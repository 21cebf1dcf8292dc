// The machine's diagram laid out to be read on a screen (the web console): top to bottom, one
// arrow per pair of states carrying the names of the events that take it (guards on hover, as
// the arrow's tooltip, instead of widening every label), the payment's path drawn in the path
// colour with its steps numbered. The full diagram (toDot) stays the reviewer's and the CLI's.
import type { MachineTransition } from "../../machines/transitions.js";

/** The machine as ./diagram.ts reads it (machineGraph), the fields drawn here. */
interface Graph {
  id: string;
  initial: string;
  states: { id: string; final: boolean }[];
  transitions: MachineTransition[];
}

const PATH = "#d9480f";
const VISITED_FILL = "#ffe8cc";

export function toCompactDot(graph: Graph, path?: Map<number, number[]>): string {
  const q = (s: string) => JSON.stringify(s);
  const visited = path ? new Set([graph.initial, ...[...path.keys()].map((i) => graph.transitions[i]!.target)]) : new Set<string>();
  const arrows = new Map<string, { source: string; target: string; events: Map<string, number[]>; guards: string[] }>();
  graph.transitions.forEach((t, i) => {
    const key = `${t.source}\u0000${t.target}`;
    const arrow = arrows.get(key) ?? arrows.set(key, { source: t.source, target: t.target, events: new Map(), guards: [] }).get(key)!;
    arrow.events.set(t.event, [...(arrow.events.get(t.event) ?? []), ...(path?.get(i) ?? [])]);
    arrow.guards.push(t.guards.length ? `${t.event} [${t.guards.join(" and ")}]` : t.event);
  });
  const lines = [
    `digraph ${q(graph.id)} {`,
    `  rankdir=TB; nodesep=0.35; ranksep=0.45;`,
    `  node [shape=box, style=rounded, fontname="Helvetica", fontsize=14, margin="0.15,0.06"];`,
    `  edge [fontname="Helvetica", fontsize=12, arrowsize=0.7];`,
    `  "__initial" [shape=point, width=0.15, label=""];`,
    `  "__initial" -> ${q(graph.initial)};`,
  ];
  for (const s of graph.states) {
    const attrs = [...(s.final ? ["peripheries=2"] : []), ...(visited.has(s.id) ? [`style="rounded,filled"`, `fillcolor="${VISITED_FILL}"`, `color="${PATH}"`] : [])];
    lines.push(`  ${q(s.id)}${attrs.length ? ` [${attrs.join(", ")}]` : ""};`);
  }
  for (const { source, target, events, guards } of arrows.values()) {
    const taken = [...events.values()].some((steps) => steps.length > 0);
    const label = [...events].map(([event, steps]) => (steps.length ? `${steps.join(", ")}. ${event}` : event)).join("\n");
    const attrs = [`label=${q(label)}`, `tooltip=${q(guards.join("; "))}`, ...(taken ? [`color="${PATH}"`, `fontcolor="${PATH}"`, "penwidth=2.5"] : [`color="#8a94a6"`, `fontcolor="#4a5263"`])];
    lines.push(`  ${q(source)} -> ${q(target)} [${attrs.join(", ")}];`);
  }
  lines.push("}");
  return lines.join("\n") + "\n";
}
