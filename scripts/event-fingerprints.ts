// Records the fingerprint of every event schema version in machines/event-fingerprints.json
// (`npm run event-fingerprints`). Adds what is new (a new event type, a new version); refuses to
// change a recorded fingerprint or drop a recorded version: a stored event's schema never changes
// under its version (machines/event-versions.ts says how to add one).
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { fingerprintProblems, registryFingerprints } from "../machines/event-versions.js";

const file = new URL("../machines/event-fingerprints.json", import.meta.url);
const recorded = existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as Record<string, string>) : {};
const current = registryFingerprints();
const refused = fingerprintProblems(recorded, current).filter((p) => !p.startsWith("new:"));
if (refused.length) {
  console.error(`event-fingerprints: nothing written:\n  ${refused.join("\n  ")}`);
  process.exit(1);
}
const added = Object.keys(current).filter((k) => !(k in recorded));
writeFileSync(file, JSON.stringify({ ...recorded, ...current }, Object.keys({ ...recorded, ...current }).sort(), 2) + "\n");
console.log(added.length ? `event-fingerprints: recorded ${added.join(", ")}` : "event-fingerprints: nothing new");
