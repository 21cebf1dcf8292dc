// The union of two machines drawn with what changed marked (`cardflow diagram --diff`): added
// transitions and states in green, removed ones in red (dashed), changed ones in orange with their
// guards marked +added / -removed; unchanged ones in grey. Mermaid marks edges in their labels
// (`+`, `-`, `~`; its state diagrams cannot colour an edge) and colours the states.
import { dotToSvg, mermaidTitle } from "./diagram.js";
import { guardChanges, type MachineDiff, type Mark, type TransitionDiff } from "./machine-diff.js";

export type DiffFormat = "mermaid" | "dot" | "svg";

const SIGN: Record<Mark, string> = { added: "+ ", removed: "- ", changed: "~ ", same: "" };
const COLOUR: Record<Mark, string> = { added: "#2b8a3e", removed: "#c92a2a", changed: "#e67700", same: "#868e96" };

function label(d: TransitionDiff): string {
  const guards = guardChanges(d);
  return guards.length ? `${d.transition.event} [${guards.join(" and ")}]` : d.transition.event;
}

const legend = (d: MachineDiff) => `machine ${d.base} → ${d.head}: + added, - removed, ~ changed`;

export function diffToMermaid(d: MachineDiff): string {
  const lines = [...mermaidTitle(legend(d)), "stateDiagram-v2", `  [*] --> ${d.initial.head}`];
  if (d.initial.base !== d.initial.head) lines.push(`  [*] --> ${d.initial.base} : - initial`);
  for (const t of d.transitions) lines.push(`  ${t.transition.source} --> ${t.transition.target} : ${SIGN[t.mark]}${label(t)}`);
  for (const s of d.states) if (s.final) lines.push(`  ${s.id} --> [*]`);
  for (const s of d.states) if (s.tags.length) lines.push(`  ${s.id} : ${s.tags.join(", ")}`);
  for (const mark of ["added", "removed", "changed"] as const) {
    const ids = d.states.filter((s) => s.mark === mark).map((s) => s.id);
    if (ids.length) lines.push(`  classDef ${mark} stroke:${COLOUR[mark]},stroke-width:3px${mark === "removed" ? ",stroke-dasharray:5 5" : ""}`, `  class ${ids.join(",")} ${mark}`);
  }
  return lines.join("\n") + "\n";
}

export function diffToDot(d: MachineDiff): string {
  const q = (s: string) => JSON.stringify(s);
  const lines = [
    `digraph "machine diff" {`,
    `  label=${q(legend(d))}; labelloc=t; fontname="Helvetica";`,
    `  rankdir=LR;`,
    `  node [shape=box, style=rounded, fontname="Helvetica"];`,
    `  edge [fontname="Helvetica", fontsize=10];`,
    `  "__initial" [shape=point, width=0.15, label=""];`,
    `  "__initial" -> ${q(d.initial.head)};`,
    ...(d.initial.base !== d.initial.head ? [`  "__initial" -> ${q(d.initial.base)} [color="${COLOUR.removed}", style=dashed, label="- initial"];`] : []),
  ];
  for (const s of d.states) {
    const attrs = [`label=${q(`${SIGN[s.mark]}${s.id}${s.tags.length ? `\n(${s.tags.join(", ")})` : ""}`)}`, ...(s.final ? ["peripheries=2"] : [])];
    if (s.mark !== "same") attrs.push(`color="${COLOUR[s.mark]}"`, `fontcolor="${COLOUR[s.mark]}"`, "penwidth=2.5", `style="rounded${s.mark === "removed" ? ",dashed" : ""}"`);
    lines.push(`  ${q(s.id)} [${attrs.join(", ")}];`);
  }
  for (const t of d.transitions) {
    const attrs = [`label=${q(`${SIGN[t.mark]}${label(t)}`)}`, `color="${COLOUR[t.mark]}"`, `fontcolor="${COLOUR[t.mark]}"`];
    if (t.mark !== "same") attrs.push("penwidth=2.5");
    if (t.mark === "removed") attrs.push("style=dashed");
    lines.push(`  ${q(t.transition.source)} -> ${q(t.transition.target)} [${attrs.join(", ")}];`);
  }
  lines.push("}");
  return lines.join("\n") + "\n";
}

export async function diffDiagram(d: MachineDiff, format: DiffFormat): Promise<string> {
  if (format === "mermaid") return diffToMermaid(d);
  const dot = diffToDot(d);
  return format === "dot" ? dot : dotToSvg(dot);
}
