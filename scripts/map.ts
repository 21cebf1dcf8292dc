// The map of the code (issue 26), drawn from the code itself: files grouped into rooms (a
// directory of src/, a top-level file of src/, machines/, projections/), imports as arrows
// (type-only imports and dynamic imports count), rooms placed on floors by the layer table below.
// It counts what the architecture promises: arrows that run back up a floor, import cycles (files,
// and rooms), files of src/ over 300 lines, and the climbs of the walk from createEngine; and it
// writes the rooms diagram (Mermaid) into docs/ARCHITECTURE.md.
//
//   npm run map              the figures, and what breaks the rules
//   npm run map -- --json    the same as JSON
//   npm run map -- --write   also rewrite the generated diagrams of docs/ARCHITECTURE.md
//
// test/architecture.test.ts holds the rules (0 arrows up, 0 cycles, no long file) and checks that
// docs/ARCHITECTURE.md carries the diagram of the code as it is.
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

/**
 * The floors, lowest first: a file may import its own floor and the floors below, never above.
 * Each entry is a floor of the layer table (TEAM.md, DESIGN.md) or, for the surfaces, one step
 * of it: the surfaces build on one another in this order (the HTTP API presents webhooks; the
 * typed client speaks the HTTP API's schemas; the console uses the client; the served process
 * composes the server with the console and metrics; the CLI drives them all, `serve` included).
 * The library floor is createEngine: it composes the engine's handlers with the presenter of
 * their answers, so the engine itself never imports a presenter. A path ending in "/" takes the
 * whole directory; the first matching entry wins.
 */
export const FLOORS: readonly { floor: string; paths: readonly string[] }[] = [
  { floor: "basics", paths: ["src/money.ts", "src/clock.ts", "src/ids.ts", "src/errors.ts", "src/bounded.ts", "src/coalesced.ts", "src/cursors.ts", "src/options.ts", "src/misspelled.ts", "src/package-root.ts", "src/data-directory.ts", "src/settings.ts"] },
  { floor: "machines", paths: ["machines/"] },
  { floor: "events", paths: ["src/events/"] },
  { floor: "ports", paths: ["src/store/", "src/processors/", "src/outbound/", "src/idempotency.ts", "src/idempotency-cap.ts", "src/idempotency-seal.ts", "src/idempotency-refusals.ts", "src/config.ts", "src/seeded-defects.ts"] },
  { floor: "projections", paths: ["projections/"] },
  { floor: "engine", paths: ["src/engine/", "src/inputs.ts"] },
  { floor: "present", paths: ["src/present/"] },
  { floor: "library", paths: ["src/engine.ts", "src/api-keys.ts"] },
  { floor: "audit", paths: ["src/audit/"] },
  { floor: "surfaces: webhooks", paths: ["src/webhooks/"] },
  { floor: "observability", paths: ["src/observability/"] },
  { floor: "surfaces: http", paths: ["src/http/"] },
  { floor: "surfaces: client", paths: ["src/client/", "src/client-sdk.ts"] },
  { floor: "surfaces: console", paths: ["src/console/"] },
  { floor: "served process", paths: ["src/serve/"] },
  { floor: "surfaces: cli", paths: ["src/cli/"] },
  { floor: "composition", paths: ["src/main.ts", "src/index.ts"] },
];

/** What the map covers. */
const ROOTS = ["machines", "src", "projections"];
export const MAX_LINES = 300;

export interface Arrow {
  from: string;
  to: string;
}

export interface CodeMap {
  /** Files (relative paths) and their line counts. */
  lines: Map<string, number>;
  /** file -> its room */
  roomOf: Map<string, string>;
  /** room -> index in FLOORS (null: not placed by the layer table) */
  floorOf: Map<string, number | null>;
  /** file -> files it imports (inside the map) */
  imports: Map<string, string[]>;
}

export interface Figures {
  lines: number;
  files: number;
  rooms: number;
  /** Floors of the layer table that hold at least one room. */
  floors: number;
  arrows_up: Arrow[];
  /** Sets of files that import each other (strongly connected, size > 1, or a file importing itself). */
  file_cycles: string[][];
  /** Sets of rooms that import each other. */
  room_cycles: string[][];
  /** src/ files over MAX_LINES, with their line counts. */
  long_files: { file: string; lines: number }[];
  /** Files the layer table does not place. */
  unplaced: string[];
  /** The walk from createEngine (src/engine.ts) through everything it imports: its arrows up. */
  walk: { files: number; climbs: Arrow[] };
}

export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "..");

function listFiles(root: string, dir: string, out: string[]): string[] {
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) listFiles(root, path, out);
    else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith(".d.ts")) out.push(path);
  }
  return out;
}

export function roomOfFile(file: string): string {
  const parts = file.split("/");
  if (parts[0] !== "src") return `${parts[0]}/`;
  return parts.length === 2 ? file : `src/${parts[1]}/`;
}

export function floorOfRoom(room: string): number | null {
  const i = FLOORS.findIndex((f) => f.paths.some((p) => (p.endsWith("/") ? room.startsWith(p) : room === p)));
  return i < 0 ? null : i;
}

/** A relative import specifier as the file it names (".js" written for ".ts", directories' index). */
function resolveImport(root: string, from: string, specifier: string): string | null {
  const base = normalize(join(dirname(from), specifier));
  const candidates = [base, base.replace(/\.js$/, ".ts"), base.replace(/\.js$/, ".tsx"), `${base}.ts`, `${base}/index.ts`];
  for (const c of candidates) if (/\.tsx?$/.test(c) && existsSync(join(root, c))) return c.split("\\").join("/");
  return null;
}

export function readMap(root = repoRoot): CodeMap {
  const files = ROOTS.flatMap((r) => listFiles(root, r, [])).sort();
  const lines = new Map<string, number>();
  const imports = new Map<string, string[]>();
  const roomOf = new Map<string, string>();
  const floorOf = new Map<string, number | null>();
  for (const file of files) {
    const text = readFileSync(join(root, file), "utf8");
    lines.set(file, text.split("\n").length - (text.endsWith("\n") ? 1 : 0));
    // every import, export-from, import type and import("...") with a literal specifier
    const { importedFiles } = ts.preProcessFile(text, true, true);
    const targets = new Set<string>();
    for (const { fileName } of importedFiles) {
      if (!fileName.startsWith(".")) continue;
      const target = resolveImport(root, file, fileName);
      if (target && target !== file) targets.add(target);
      else if (target === file) targets.add(file);
    }
    imports.set(file, [...targets].sort());
    const room = roomOfFile(file);
    roomOf.set(file, room);
    floorOf.set(room, floorOfRoom(room));
  }
  return { lines, roomOf, floorOf, imports };
}

/** Tarjan's strongly connected components of a graph given as adjacency lists. */
function cycles(nodes: Iterable<string>, next: (n: string) => Iterable<string>): string[][] {
  let index = 0;
  const indexOf = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    indexOf.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of next(v)) {
      if (!indexOf.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, indexOf.get(w)!));
    }
    if (low.get(v) === indexOf.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || [...next(v)].includes(v)) out.push(component.sort());
    }
  };
  for (const n of nodes) if (!indexOf.has(n)) visit(n);
  return out.sort((a, b) => a[0]!.localeCompare(b[0]!));
}

/** Room -> rooms it imports. */
export function roomArrows(map: CodeMap): Map<string, Map<string, number>> {
  const out = new Map<string, Map<string, number>>();
  for (const [file, targets] of map.imports) {
    const from = map.roomOf.get(file)!;
    const row = out.get(from) ?? new Map<string, number>();
    out.set(from, row);
    for (const target of targets) {
      const to = map.roomOf.get(target)!;
      if (to !== from) row.set(to, (row.get(to) ?? 0) + 1);
    }
  }
  return out;
}

const isUp = (map: CodeMap, from: string, to: string) => {
  const a = map.floorOf.get(map.roomOf.get(from)!);
  const b = map.floorOf.get(map.roomOf.get(to)!);
  return a != null && b != null && b > a;
};

export function figures(map: CodeMap): Figures {
  const files = [...map.lines.keys()];
  const arrowsUp: Arrow[] = [];
  for (const [from, targets] of map.imports) for (const to of targets) if (isUp(map, from, to)) arrowsUp.push({ from, to });
  const rooms = roomArrows(map);
  const placed = new Set([...map.floorOf.values()].filter((f) => f !== null));

  // the walk: everything src/engine.ts (createEngine) reaches through imports, and its climbs
  const seen = new Set<string>();
  const climbs: Arrow[] = [];
  const walk = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const to of map.imports.get(file) ?? []) {
      if (isUp(map, file, to)) climbs.push({ from: file, to });
      walk(to);
    }
  };
  if (map.imports.has("src/engine.ts")) walk("src/engine.ts");

  return {
    lines: files.reduce((n, f) => n + map.lines.get(f)!, 0),
    files: files.length,
    rooms: new Set(map.roomOf.values()).size,
    floors: placed.size,
    arrows_up: arrowsUp,
    file_cycles: cycles(files, (f) => map.imports.get(f) ?? []),
    room_cycles: cycles(rooms.keys(), (r) => rooms.get(r)?.keys() ?? []),
    long_files: files.filter((f) => f.startsWith("src/") && map.lines.get(f)! > MAX_LINES).map((file) => ({ file, lines: map.lines.get(file)! })),
    unplaced: files.filter((f) => map.floorOf.get(map.roomOf.get(f)!) === null),
    walk: { files: seen.size, climbs },
  };
}

const nodeId = (room: string) => room.replace(/[^A-Za-z0-9]/g, "_").replace(/_+$/, "");

/**
 * The rooms on their floors (highest first), arrows pointing from importer to imported: down.
 * Arrows into the basics floor are left out (every floor may use money, clock, ids, errors).
 */
export function roomsDiagram(map: CodeMap): string {
  const rooms = roomArrows(map);
  const byFloor = new Map<number, string[]>();
  for (const room of [...new Set(map.roomOf.values())].sort()) {
    const floor = map.floorOf.get(room) ?? -1;
    byFloor.set(floor, [...(byFloor.get(floor) ?? []), room]);
  }
  const out = ["```mermaid", "flowchart TB"];
  for (const floor of [...byFloor.keys()].sort((a, b) => b - a)) {
    out.push(`  subgraph F${floor < 0 ? "x" : floor}["${floor < 0 ? "not placed" : FLOORS[floor]!.floor}"]`);
    for (const room of byFloor.get(floor)!) out.push(`    ${nodeId(room)}["${room}"]`);
    out.push("  end");
  }
  const up: number[] = [];
  let n = 0;
  for (const from of [...rooms.keys()].sort()) {
    for (const to of [...rooms.get(from)!.keys()].sort()) {
      if (map.floorOf.get(to) === 0) continue;
      const a = map.floorOf.get(from);
      const b = map.floorOf.get(to);
      if (a != null && b != null && b > a) up.push(n);
      out.push(`  ${nodeId(from)} --> ${nodeId(to)}`);
      n++;
    }
  }
  if (up.length) out.push(`  linkStyle ${up.join(",")} stroke:#d00,stroke-width:3px`);
  out.push("```");
  return out.join("\n");
}

/** One room's files and the arrows between them (the engine's inside, for docs/ARCHITECTURE.md). */
export function roomDiagram(map: CodeMap, prefix: string): string {
  const files = [...map.lines.keys()].filter((f) => f.startsWith(prefix));
  const groups = new Map<string, string[]>();
  for (const f of files) {
    const dir = dirname(f);
    groups.set(dir, [...(groups.get(dir) ?? []), f]);
  }
  const out = ["```mermaid", "flowchart TB"];
  for (const [dir, members] of [...groups].sort()) {
    out.push(`  subgraph ${nodeId(dir)}_dir["${dir}/"]`);
    for (const f of members) out.push(`    ${nodeId(f)}["${f.slice(dir.length + 1)}"]`);
    out.push("  end");
  }
  for (const f of files.sort()) for (const t of map.imports.get(f) ?? []) if (t.startsWith(prefix)) out.push(`  ${nodeId(f)} --> ${nodeId(t)}`);
  out.push("```");
  return out.join("\n");
}

/** The generated blocks of docs/ARCHITECTURE.md: marker name -> content. */
export function generatedBlocks(map: CodeMap): Record<string, string> {
  return { rooms: roomsDiagram(map), engine: roomDiagram(map, "src/engine/") };
}

/** `text` with each `<!-- map:NAME -->...<!-- /map:NAME -->` block replaced by its generated content. */
export function withBlocks(text: string, blocks: Record<string, string>): string {
  let out = text;
  for (const [name, content] of Object.entries(blocks)) {
    const re = new RegExp(`(<!-- map:${name} -->)[\\s\\S]*?(<!-- /map:${name} -->)`);
    if (!re.test(out)) throw new Error(`docs/ARCHITECTURE.md has no <!-- map:${name} --> block`);
    out = out.replace(re, (_, open: string, close: string) => `${open}\n${content}\n${close}`);
  }
  return out;
}

function report(f: Figures): string {
  const arrow = (a: Arrow) => `  ${a.from} -> ${a.to}`;
  return [
    `lines ${f.lines} · files ${f.files} · rooms ${f.rooms} · floors ${f.floors}`,
    `arrows up: ${f.arrows_up.length}`,
    ...f.arrows_up.map(arrow),
    `file cycles: ${f.file_cycles.length}`,
    ...f.file_cycles.map((c) => `  ${c.join(" <-> ")}`),
    `room cycles: ${f.room_cycles.length}`,
    ...f.room_cycles.map((c) => `  ${c.join(" <-> ")}`),
    `src files over ${MAX_LINES} lines: ${f.long_files.length}`,
    ...f.long_files.map((l) => `  ${l.file} (${l.lines})`),
    `walk from createEngine: ${f.walk.files} files, ${f.walk.climbs.length} climbs`,
    ...f.walk.climbs.map(arrow),
    ...(f.unplaced.length ? [`not placed by the layer table: ${f.unplaced.join(", ")}`] : []),
  ].join("\n");
}

if (process.argv[1] && relative(process.argv[1], fileURLToPath(import.meta.url)) === "") {
  const map = readMap();
  if (process.argv.includes("--write")) {
    const doc = join(repoRoot, "docs/ARCHITECTURE.md");
    writeFileSync(doc, withBlocks(readFileSync(doc, "utf8"), generatedBlocks(map)));
  }
  const f = figures(map);
  process.stdout.on("error", () => undefined); // a reader that stops early (| head) is no failure
  console.log(process.argv.includes("--json") ? JSON.stringify(f, null, 2) : report(f));
  if (process.argv.includes("--write")) console.log("wrote the diagrams of docs/ARCHITECTURE.md");
}
