import { fileURLToPath } from "node:url";

/** Node's arguments for a server process a test spawns: TypeScript through tsx, and the server
 * exits when the test process is gone (./die-with-parent.mjs), never left running after a timeout. */
export const SERVER_NODE_ARGS = ["--import", "tsx", "--import", fileURLToPath(new URL("./die-with-parent.mjs", import.meta.url))];
