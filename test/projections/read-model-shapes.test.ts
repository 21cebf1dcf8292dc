// A released read model never changes under its name: during a rolling upgrade the processes of two
// releases fold the same store at once, and under one name each would write its own shape into the
// other's rows and move their shared checkpoint past events the other never folds. So a change takes
// a new name and retires the old one (projections/projection.ts, projections/registry.ts);
// projections/read-model-shapes.json holds how each released name is stored.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { readModelShape } from "../../projections/projection.js";
import { PROJECTIONS, RETIRED_PROJECTIONS } from "../../projections/registry.js";
import { shapeText, type ReadModelShape } from "../../src/store/port/tables.js";
import { FEED_SHAPES } from "../../src/webhooks/feed.js";

const recorded = JSON.parse(readFileSync(new URL("../../projections/read-model-shapes.json", import.meta.url), "utf8")) as Record<string, unknown>;
const stored = (shape: ReadModelShape) => ({ version: shape.version, shape: JSON.parse(shapeText(shape)) as unknown });
const current: Record<string, unknown> = {
  ...Object.fromEntries(PROJECTIONS.map((p) => [p.name, stored(readModelShape(p))])),
  ...Object.fromEntries(Object.entries(FEED_SHAPES).map(([name, shape]) => [name, stored(shape)])),
};

describe("read models' stored forms", () => {
  it("every read model is stored as recorded under its name (a change takes a new name)", () => {
    for (const [name, form] of Object.entries(current)) {
      expect(recorded[name], `${name} is not recorded: add ${JSON.stringify({ [name]: form })} to projections/read-model-shapes.json`).toBeDefined();
      expect(form, `${name} changed under its name: give it a new name (${name.replace(/_v\d+$/, "")}_v<n>), retire ${name} (RETIRED_PROJECTIONS) and record the new one`).toEqual(recorded[name]);
    }
  });

  it("a recorded name that no longer runs is retired, and a retired name never runs again", () => {
    for (const name of Object.keys(recorded)) if (!(name in current)) expect(RETIRED_PROJECTIONS, `${name} no longer runs`).toContain(name);
    for (const name of RETIRED_PROJECTIONS) expect(current[name], `${name} is retired`).toBeUndefined();
  });
});
