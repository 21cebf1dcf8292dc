// The console's browser code (./app, TypeScript with Preact + htm) bundled into one ES module
// by esbuild: at `npm run build` into dist/ (the published package serves that file), or, when
// the server runs from the sources (`npm start` through tsx), on first request, so a checkout
// needs no build step and never serves a stale bundle.
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";

const entry = new URL("./app/main.ts", import.meta.url);
/** Where `npm run build` writes the bundle: beside this module in dist/. */
export const BUNDLE_FILE = new URL("./console.js", import.meta.url);

export async function bundleConsole(): Promise<string> {
  const esbuild = await import("esbuild"); // a devDependency: only a checkout bundles
  const result = await esbuild.build({
    entryPoints: [entry.pathname],
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2020",
    minify: true,
    legalComments: "none",
    write: false,
  });
  return result.outputFiles[0]!.text;
}

/** The bundle: the built file when there is one beside the compiled server, else bundled now. */
export async function consoleScript(): Promise<string> {
  if (!existsSync(entry) && existsSync(BUNDLE_FILE)) return readFile(BUNDLE_FILE, "utf8");
  return bundleConsole();
}
