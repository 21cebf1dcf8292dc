import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { auditExamples, withReadmeExamples } from "./flows.js";

describe("README.md audit examples", () => {
  it("show what `cardflow audit` and `cardflow diagram --payment` print today (run `npm run diagrams`)", async () => {
    const readme = await readFile(new URL("../../README.md", import.meta.url), "utf8");
    const examples = await auditExamples();
    expect(readme).toContain(examples.timeline);
    expect(readme).toContain(examples.diagram);
    expect(withReadmeExamples(readme, examples)).toBe(readme);
  });
});
