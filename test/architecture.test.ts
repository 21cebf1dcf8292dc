// The architecture's rules, measured on the map drawn from the code (scripts/map.ts; issue 26):
// arrows only point down the floors, no import cycle, no file of src/ over 300 lines, and
// docs/ARCHITECTURE.md shows the code as it is. The list of long files is what is still to be
// split, each entry naming who does it: it only shrinks (an entry that no longer applies fails too).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { figures, FLOORS, generatedBlocks, MAX_LINES, readMap, repoRoot, withBlocks } from "../scripts/map.js";

/** Files of src/ still over MAX_LINES, and who splits them. */
const LONG_FILES_TO_SPLIT: Record<string, string> = {};

const map = readMap();
const f = figures(map);
const named = (list: { from: string; to: string }[]) => list.map((a) => `${a.from} -> ${a.to}`).sort();

describe("the map of the code (scripts/map.ts)", () => {
  it("places every file on a floor of the layer table", () => {
    expect(f.unplaced, `add these to FLOORS in scripts/map.ts (and the table of docs/ARCHITECTURE.md)`).toEqual([]);
    expect(FLOORS.map((x) => x.floor)).toEqual(expect.arrayContaining(["machines", "events", "ports", "projections", "engine", "present", "audit", "composition"]));
  });

  it("has no arrow running back up a floor", () => {
    expect(named(f.arrows_up)).toEqual([]);
  });

  it("has no import cycle, of files or of rooms, type-only imports included", () => {
    expect([...f.file_cycles, ...f.room_cycles].map((c) => c.join(" <-> "))).toEqual([]);
  });

  it(`has no file in src/ over ${MAX_LINES} lines (beyond the ones being split)`, () => {
    expect(f.long_files.map((l) => l.file).sort()).toEqual(Object.keys(LONG_FILES_TO_SPLIT).sort());
  });

  it("walks from createEngine's options without climbing a floor", () => {
    expect(f.walk.files).toBeGreaterThan(10);
    expect(named(f.walk.climbs)).toEqual([]);
  });

  it("counts what a hand-made case says: an arrow up, a type-only cycle, a long file", () => {
    // the measure itself can fail: a map with a known arrow up, cycle and long file finds them
    const lines = new Map([["src/engine/a.ts", 10], ["src/engine/b.ts", 301], ["machines/m.ts", 5]]);
    const imports = new Map([["src/engine/a.ts", ["src/engine/b.ts"]], ["src/engine/b.ts", ["src/engine/a.ts"]], ["machines/m.ts", ["src/engine/a.ts"]]]);
    const roomOf = new Map([["src/engine/a.ts", "src/engine/"], ["src/engine/b.ts", "src/engine/"], ["machines/m.ts", "machines/"]]);
    const floorOf = new Map<string, number | null>([["src/engine/", 5], ["machines/", 1]]);
    const made = figures({ lines, imports, roomOf, floorOf });
    expect(named(made.arrows_up)).toEqual(["machines/m.ts -> src/engine/a.ts"]);
    expect(made.file_cycles).toEqual([["src/engine/a.ts", "src/engine/b.ts"]]);
    expect(made.room_cycles).toEqual([]); // machines/ -> src/engine/ only: no circle of rooms
    expect(made.long_files).toEqual([{ file: "src/engine/b.ts", lines: 301 }]);
    expect(made.lines).toBe(316);
  });

  it("docs/ARCHITECTURE.md carries the diagrams of the code as it is (npm run map -- --write)", () => {
    const doc = readFileSync(join(repoRoot, "docs/ARCHITECTURE.md"), "utf8");
    expect(withBlocks(doc, generatedBlocks(map))).toBe(doc);
  });
});
