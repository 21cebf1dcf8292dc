// The architecture's rules, measured on the map drawn from the code (scripts/map.ts; issue 26):
// arrows only point down the floors, no import cycle, no file of src/ over 300 lines, and
// docs/ARCHITECTURE.md shows the code as it is. The lists below are what is still to be done,
// each entry naming who does it: they only shrink (an entry that no longer applies fails too).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { figures, FLOORS, generatedBlocks, MAX_LINES, readMap, repoRoot, withBlocks } from "../scripts/map.js";

/** Files of src/ still over MAX_LINES, and who splits them. */
const LONG_FILES_TO_SPLIT: Record<string, string> = {
  "src/processors/simulator.ts": "security (issue 25: adapters beside the simulators)",
};

/** Arrows up still in the code, and who removes them. */
const ARROWS_UP_TO_REMOVE: Record<string, string> = {
  "src/engine/core.ts -> src/present/payment-record.ts": "engine (handlers get their presenter from createEngine)",
  "src/engine/payment-streams.ts -> src/present/payment-record.ts": "engine (handlers get their presenter from createEngine)",
  "src/engine/commands/refund.ts -> src/present/payment-record.ts": "engine (handlers get their presenter from createEngine)",
  "src/engine/commands/process-payment.ts -> src/present/payment-record.ts": "engine (handlers get their presenter from createEngine)",
  "src/engine/commands/create-intent.ts -> src/present/payment-record.ts": "engine (handlers get their presenter from createEngine)",
  "src/engine/commands/collect-payment-method.ts -> src/present/payment-record.ts": "engine (handlers get their presenter from createEngine)",
  "src/engine/commands/capture.ts -> src/present/payment-record.ts": "engine (handlers get their presenter from createEngine)",
  "src/engine/commands/cancel.ts -> src/present/payment-record.ts": "engine (handlers get their presenter from createEngine)",
  "src/engine/commands/authorize.ts -> src/present/payment-record.ts": "engine (handlers get their presenter from createEngine)",
};

/** Import cycles still in the code (files, then rooms), and who breaks them. */
const CYCLES_TO_BREAK: Record<string, string> = {
  "src/engine/attempt.ts <-> src/engine/core.ts": "engine (no Core bag)",
  "src/engine/commands/capture.ts <-> src/engine/follow-up.ts": "engine (the follow-up policy reacts to events)",
};

const map = readMap();
const f = figures(map);
const named = (list: { from: string; to: string }[]) => list.map((a) => `${a.from} -> ${a.to}`).sort();

describe("the map of the code (scripts/map.ts)", () => {
  it("places every file on a floor of the layer table", () => {
    expect(f.unplaced, `add these to FLOORS in scripts/map.ts (and the table of docs/ARCHITECTURE.md)`).toEqual([]);
    expect(FLOORS.map((x) => x.floor)).toEqual(expect.arrayContaining(["machines", "events", "ports", "projections", "engine", "present", "audit", "composition"]));
  });

  it("has no arrow running back up a floor (beyond the ones being removed)", () => {
    expect(named(f.arrows_up)).toEqual(Object.keys(ARROWS_UP_TO_REMOVE).sort());
  });

  it("has no import cycle, type-only imports included (beyond the ones being broken)", () => {
    const found = [...f.file_cycles, ...f.room_cycles].map((c) => c.join(" <-> ")).sort();
    expect(found).toEqual(Object.keys(CYCLES_TO_BREAK).sort());
  });

  it(`has no file in src/ over ${MAX_LINES} lines (beyond the ones being split)`, () => {
    expect(f.long_files.map((l) => l.file).sort()).toEqual(Object.keys(LONG_FILES_TO_SPLIT).sort());
  });

  it("walks from createEngine's options without climbing a floor (beyond the arrows being removed)", () => {
    expect(f.walk.files).toBeGreaterThan(10);
    for (const climb of named(f.walk.climbs)) expect(ARROWS_UP_TO_REMOVE).toHaveProperty([climb]);
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
