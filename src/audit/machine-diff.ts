// What changed between two machine definitions (machines/definition.ts): states, transitions,
// guards and events added, removed or changed, for a reviewer of a change to machines/. The union
// of both machines is drawn by ./diagram-diff.ts; `markdownDiff` is the summary table for a pull
// request comment.
import { z } from "zod";
import type { MachineDefinition, MachineDefinitionTransition } from "../../machines/definition.js";
import { MACHINE_FORMAT, machineHash } from "../../machines/definition.js";

export type Mark = "added" | "removed" | "changed" | "same";

export interface TransitionDiff {
  /** `${source} --${event}--> ${target}` */
  id: string;
  mark: Mark;
  /** The transition as it is now (as it was, when removed). */
  transition: MachineDefinitionTransition;
  /** changed: what it was. */
  before?: MachineDefinitionTransition;
}

export interface MachineDiff {
  base: string;
  head: string;
  initial: { base: string; head: string };
  states: { id: string; mark: Mark; final: boolean; tags: string[]; follow_ups: string[]; was?: { final: boolean; tags: string[]; follow_ups: string[] } }[];
  transitions: TransitionDiff[];
  guards: { name: string; mark: Exclude<Mark, "changed"> }[];
  events: { type: string; mark: Mark; version: number; was?: number }[];
  /** Nothing differs. */
  same: boolean;
}

const Transition = z.object({ source: z.string(), event: z.string(), target: z.string(), guards: z.array(z.string()), actions: z.array(z.string()) });
/** The shape `cardflow machine export` writes (docs/machine.json). */
export const MachineDefinitionSchema = z.object({
  format: z.literal(MACHINE_FORMAT),
  id: z.string(),
  initial: z.string(),
  states: z.array(z.object({ id: z.string(), final: z.boolean(), tags: z.array(z.string()), follow_ups: z.array(z.object({ command: z.string(), guards: z.array(z.string()) })).optional() })),
  final_states: z.array(z.string()),
  events: z.array(z.object({ type: z.string(), version: z.number().int() })),
  guards: z.array(z.string()),
  actions: z.array(z.string()),
  transitions: z.array(Transition),
}).superRefine((machine, ctx) => {
  // a definition's states are declared: a transition, the initial state or a final one naming another is no machine
  const declared = new Set(machine.states.map((state) => state.id));
  const named = [["initial", machine.initial], ...machine.final_states.map((id, i) => [`final_states.${i}`, id]), ...machine.transitions.flatMap((t, i) => [[`transitions.${i}.source`, t.source], [`transitions.${i}.target`, t.target]])];
  for (const [path, id] of named) if (!declared.has(id!)) ctx.addIssue({ code: "custom", path: path!.split("."), message: `names state ${JSON.stringify(id)}, which states does not declare` });
});

const idOf = (t: MachineDefinitionTransition) => `${t.source} --${t.event}--> ${t.target}`;
const sameList = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i]);
/** A state's follow-ups as words ("capture when isAutomaticCapture"); none in definitions from before they were listed. */
const followUps = (s: MachineDefinition["states"][number]) => (s.follow_ups ?? []).map((f) => `${f.command} when ${f.guards.join(" and ")}`);

/** Keys in the order of `head`, then what only `base` has (each list keeps its own order). */
function union<T>(base: readonly T[], head: readonly T[], key: (t: T) => string): string[] {
  const keys = head.map(key);
  const seen = new Set(keys);
  for (const t of base) if (!seen.has(key(t))) (keys.push(key(t)), seen.add(key(t)));
  return keys;
}

export function diffMachines(base: MachineDefinition, head: MachineDefinition): MachineDiff {
  const baseStates = new Map(base.states.map((s) => [s.id, s]));
  const headStates = new Map(head.states.map((s) => [s.id, s]));
  const states = union(base.states, head.states, (s) => s.id).map((id) => {
    const [b, h] = [baseStates.get(id), headStates.get(id)];
    const now = (h ?? b)!;
    const mark: Mark = !b ? "added" : !h ? "removed" : b.final !== h.final || !sameList(b.tags, h.tags) || !sameList(followUps(b), followUps(h)) ? "changed" : "same";
    return { id, mark, final: now.final, tags: now.tags, follow_ups: followUps(now), ...(mark === "changed" ? { was: { final: b!.final, tags: b!.tags, follow_ups: followUps(b!) } } : {}) };
  });

  const baseTransitions = new Map(base.transitions.map((t) => [idOf(t), t]));
  const headTransitions = new Map(head.transitions.map((t) => [idOf(t), t]));
  // in the head's order, a removed transition right after the last one of its source state
  const transitions = union(base.transitions, head.transitions, idOf).map((id): TransitionDiff => {
    const [b, h] = [baseTransitions.get(id), headTransitions.get(id)];
    if (!b) return { id, mark: "added", transition: h! };
    if (!h) return { id, mark: "removed", transition: b };
    const changed = !sameList(b.guards, h.guards) || !sameList(b.actions, h.actions);
    return changed ? { id, mark: "changed", transition: h, before: b } : { id, mark: "same", transition: h };
  });
  const order = new Map(head.states.map((s, i) => [s.id, i]));
  transitions.sort((x, y) => (order.get(x.transition.source) ?? order.size) - (order.get(y.transition.source) ?? order.size));

  const baseGuards = new Set(base.guards);
  const headGuards = new Set(head.guards);
  const guards = union(base.guards, head.guards, (g) => g).map((name) => ({ name, mark: !baseGuards.has(name) ? ("added" as const) : !headGuards.has(name) ? ("removed" as const) : ("same" as const) }));

  const baseEvents = new Map(base.events.map((e) => [e.type, e.version]));
  const headEvents = new Map(head.events.map((e) => [e.type, e.version]));
  const events = union(base.events, head.events, (e) => e.type).map((type) => {
    const [b, h] = [baseEvents.get(type), headEvents.get(type)];
    const mark: Mark = b === undefined ? "added" : h === undefined ? "removed" : b !== h ? "changed" : "same";
    return { type, mark, version: (h ?? b)!, ...(mark === "changed" ? { was: b! } : {}) };
  });

  const same = base.initial === head.initial && [...states, ...transitions, ...guards, ...events].every((x) => x.mark === "same");
  return { base: machineHash(base), head: machineHash(head), initial: { base: base.initial, head: head.initial }, states, transitions, guards, events, same };
}

/** Guards of a changed transition, each marked: `+g` added, `-g` removed, `g` kept. */
export function guardChanges(d: TransitionDiff): string[] {
  if (d.mark !== "changed") return d.transition.guards;
  const before = new Set(d.before!.guards);
  const now = new Set(d.transition.guards);
  return [...d.transition.guards.map((g) => (before.has(g) ? g : `+${g}`)), ...d.before!.guards.filter((g) => !now.has(g)).map((g) => `-${g}`)];
}

const code = (s: string) => `\`${s}\``;
const list = (xs: readonly string[]) => (xs.length ? xs.map(code).join(", ") : "none");

/** A summary table of the changes for a pull request comment (GitHub-flavoured Markdown). */
export function markdownDiff(d: MachineDiff): string {
  const title = `### Payment machine: ${code(d.base)} → ${code(d.head)}`;
  if (d.same) return `${title}\n\nNo change to states, transitions, guards or events.\n`;
  const rows: string[][] = [];
  if (d.initial.base !== d.initial.head) rows.push(["changed", "initial state", `${code(d.initial.base)} → ${code(d.initial.head)}`, ""]);
  for (const s of d.states) {
    if (s.mark === "same") continue;
    const details =
      s.mark === "changed"
        ? [
            s.was!.final !== s.final ? `final: ${s.was!.final} → ${s.final}` : "",
            !sameList(s.was!.tags, s.tags) ? `tags: ${list(s.was!.tags)} → ${list(s.tags)}` : "",
            !sameList(s.was!.follow_ups, s.follow_ups) ? `follow-ups: ${list(s.was!.follow_ups)} → ${list(s.follow_ups)}` : "",
          ].filter(Boolean).join("; ")
        : s.final ? "final" : "";
    rows.push([s.mark, "state", code(s.id), details]);
  }
  for (const t of d.transitions) {
    if (t.mark === "same") continue;
    const details =
      t.mark === "changed"
        ? [!sameList(t.before!.guards, t.transition.guards) ? `guards: ${guardChanges(t).map(code).join(", ")}` : "", !sameList(t.before!.actions, t.transition.actions) ? `actions: ${list(t.before!.actions)} → ${list(t.transition.actions)}` : ""].filter(Boolean).join("; ")
        : `guards: ${list(t.transition.guards)}`;
    rows.push([t.mark, "transition", code(t.id), details]);
  }
  for (const g of d.guards) if (g.mark !== "same") rows.push([g.mark, "guard", code(g.name), ""]);
  for (const e of d.events) if (e.mark !== "same") rows.push([e.mark, "event", code(e.type), e.mark === "changed" ? `schema version ${e.was} → ${e.version}` : `version ${e.version}`]);
  const count = (mark: Mark) => rows.filter((r) => r[0] === mark).length;
  return [
    title,
    "",
    `${count("added")} added, ${count("removed")} removed, ${count("changed")} changed.`,
    "",
    "| change | what | name | details |",
    "|---|---|---|---|",
    ...rows.map((r) => `| ${r.join(" | ")} |`),
    "",
  ].join("\n");
}
