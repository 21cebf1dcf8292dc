// A separate process appending to a PostgreSQL store (test/store/postgres-signal.test.ts): for
// each stream name read on stdin, one event appended, then its position printed.
import { randomUUID } from "node:crypto";
import { createInterface } from "node:readline";
import { createPostgresStore } from "../../../src/store/postgres/index.js";

const { url, schema } = JSON.parse(process.argv[2]!) as { url: string; schema: string };
const { events, readModels } = await createPostgresStore({ connectionString: url, schema });
await readModels.close();
console.log("READY");
for await (const stream of createInterface({ input: process.stdin })) {
  const metadata = { timestamp: "2025-01-02T03:04:05.000+00:00", request_id: 1, idempotency_key: null };
  const { position } = await events.append(stream, [{ id: randomUUID(), type: "appended", version: 1, data: {}, metadata }], { expectedRevision: "any" });
  console.log(String(position));
}
await events.close();
