#!/usr/bin/env node
// Runs the TypeScript CLI through tsx, so no build step stands between a clone and the command.
import { register } from "tsx/esm/api";
register();
const { main } = await import("../src/cli/index.ts");
await main();
