// A process that commits read models in a bulk window (ReadModelStore.bulk: synchronous=OFF behind
// a mark of this boot) and stays in it until it is killed: argv[2] is the SQLite events' file.
import { createSqliteStore } from "../../../src/store/sqlite/index.js";

const { events, readModels } = createSqliteStore({ path: process.argv[2]! });
await events.close();
await readModels.bulk!(async () => {
  await readModels.commitBatch([{ projection: "worker", docs: [{ key: "p1", doc: { s: "succeeded" } }], checkpoint: 3 }]);
  console.log("committed");
  await new Promise(() => setInterval(() => undefined, 1_000));
});
