// The README as the package carries it: `npm pack` (prepack) rewrites README.md so that every link
// is absolute, and postpack puts the repository's README back. The repository's URL is not known
// (package.json has no `repository`), so links point at the package's own files on the npm CDN,
// pinned to this version (`https://unpkg.com/cardflow@<version>/docs/...`: `files` ships docs/);
// a source file is linked as its declaration in dist/, and a link outside the repository (the
// spec) becomes plain text. Links within the README (#anchors) and absolute ones stay as they are.
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";

const KEEP = ".tmp/README.repository.md";

export function packedReadme(text, { name, version }) {
  const base = `https://unpkg.com/${name}@${version}/`;
  const absolute = (prose) =>
    prose.replace(/(!?)\[([^\]]*)\]\(([^)\s]+)\)/g, (link, bang, words, target) => {
      if (/^[a-z]+:/i.test(target) || target.startsWith("#")) return link;
      if (target.startsWith("../")) return words; // outside the package: its words only
      const file = target.replace(/^\.\//, "").replace(/^src\/(.*)\.ts(#.*)?$/, "dist/src/$1.d.ts$2");
      return `${bang}[${words}](${base}${file})`;
    });
  // fenced code blocks are left byte for byte (the README's runnable examples are read from them)
  return text.split(/(^```[\s\S]*?^```)/m).map((part, i) => (i % 2 ? part : absolute(part))).join("");
}

const [command] = process.argv.slice(2);
if (command === "rewrite") {
  const pkg = JSON.parse(readFileSync("package.json", "utf8"));
  mkdirSync(".tmp", { recursive: true });
  copyFileSync("README.md", KEEP);
  writeFileSync("README.md", packedReadme(readFileSync("README.md", "utf8"), pkg));
} else if (command === "restore") {
  if (existsSync(KEEP)) renameSync(KEEP, "README.md");
} else if (command !== undefined) {
  throw new Error(`usage: node scripts/pack-readme.mjs rewrite|restore`);
}
