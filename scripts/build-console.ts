// `npm run build` (after tsc): the console's browser bundle into dist/src/console/console.js.
import { mkdir, writeFile } from "node:fs/promises";
import { bundleConsole } from "../src/console/bundle.js";

const out = new URL("../dist/src/console/console.js", import.meta.url);
await mkdir(new URL(".", out), { recursive: true });
const script = await bundleConsole();
await writeFile(out, script);
console.log(`wrote ${out.pathname.replace(process.cwd() + "/", "")} (${script.length} bytes)`);
