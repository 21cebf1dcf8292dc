#!/usr/bin/env node
// The `cardflow` command. The published package runs the compiled CLI (dist/); a checkout of the
// repository, which has the sources and tsx (a devDependency), runs the sources, so no build
// step stands between a clone and the command and a stale dist/ is never used there.
import { existsSync } from "node:fs";

const source = new URL("../src/cli/index.ts", import.meta.url);
let main;
if (existsSync(source)) {
  const { register } = await import("tsx/esm/api");
  register();
  ({ main } = await import(source.href));
} else {
  ({ main } = await import("../dist/src/cli/index.js"));
}
await main();
