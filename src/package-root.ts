// Where cardflow's own files are, from the running module: the repository in a checkout (sources
// run by tsx), node_modules/cardflow once installed (compiled JavaScript under dist/). Found by
// walking up to the package.json named cardflow, so sources and dist/ agree.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

function findPackageRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const file = join(dir, "package.json");
    if (existsSync(file) && (JSON.parse(readFileSync(file, "utf8")) as { name?: string }).name === "cardflow") return dir;
    if (dirname(dir) === dir) throw new Error(`cardflow's package.json not found above ${from}`);
  }
}

export const packageRoot = findPackageRoot(dirname(fileURLToPath(import.meta.url)));
export const packageVersion = (JSON.parse(readFileSync(join(packageRoot, "package.json"), "utf8")) as { version: string }).version;

/**
 * The data directory when DATA_DIR is not set. In a checkout: `data/` in the repository, whatever
 * folder a command runs from, so `npm start` and `npx cardflow` from a subfolder open the same
 * store. Installed as a package: `data/` in the current folder (never inside node_modules).
 */
export const defaultDataDir = (): string =>
  packageRoot.split(sep).includes("node_modules") ? resolve("data") : join(packageRoot, "data");
