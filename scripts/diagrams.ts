// Regenerates docs/payment-machine.md (Mermaid) and docs/payment-machine.svg from the machine.
// test/audit/diagram.test.ts fails when the committed files differ from what this writes.
import { writeFile } from "node:fs/promises";
import { machineDocs } from "../src/audit/diagram.js";

const { markdown, svg } = await machineDocs();
await writeFile(new URL("../docs/payment-machine.md", import.meta.url), markdown);
await writeFile(new URL("../docs/payment-machine.svg", import.meta.url), svg);
console.log("wrote docs/payment-machine.md and docs/payment-machine.svg");
