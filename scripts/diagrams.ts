// Regenerates what is generated from the machine and the engine: docs/payment-machine.md (Mermaid),
// docs/payment-machine.svg and README.md's audit examples. test/audit/diagram.test.ts and
// test/audit/readme.test.ts fail when the committed files differ from what this writes.
import { readFile, writeFile } from "node:fs/promises";
import { machineDocs } from "../src/audit/diagram.js";
import { auditExamples, withReadmeExamples } from "../test/audit/flows.js";

const at = (path: string) => new URL(`../${path}`, import.meta.url);
const { markdown, svg } = await machineDocs();
await writeFile(at("docs/payment-machine.md"), markdown);
await writeFile(at("docs/payment-machine.svg"), svg);
await writeFile(at("README.md"), withReadmeExamples(await readFile(at("README.md"), "utf8"), await auditExamples()));
console.log("wrote docs/payment-machine.md, docs/payment-machine.svg and README.md's audit examples");
