// Regenerates what is generated from the machine and the engine: docs/payment-machine.md (Mermaid),
// docs/payment-machine.svg, docs/machine.json (the canonical definition), docs/machines/<hash>.json
// (this machine version's definition, kept for ever beside the earlier ones) and README.md's audit
// examples. test/audit/diagram.test.ts, test/audit/machine-export.test.ts and
// test/audit/readme.test.ts fail when the committed files differ from what this writes.
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { machineDefinition, machineHash, machineJson } from "../machines/definition.js";
import { machineDocs } from "../src/audit/diagram.js";
import { auditExamples, withReadmeExamples } from "../test/audit/flows.js";

const at = (path: string) => new URL(`../${path}`, import.meta.url);
const { markdown, svg } = await machineDocs();
await writeFile(at("docs/payment-machine.md"), markdown);
await writeFile(at("docs/payment-machine.svg"), svg);
const definition = machineDefinition();
await writeFile(at("docs/machine.json"), machineJson(definition));
await mkdir(at("docs/machines/"), { recursive: true });
await writeFile(at(`docs/machines/${machineHash(definition)}.json`), machineJson(definition));
await writeFile(at("README.md"), withReadmeExamples(await readFile(at("README.md"), "utf8"), await auditExamples()));
console.log(`wrote docs/payment-machine.md, docs/payment-machine.svg, docs/machine.json, docs/machines/${machineHash(definition)}.json and README.md's audit examples`);
