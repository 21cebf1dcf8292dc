// Writes docs/openapi.json, the OpenAPI document `GET /openapi.json` serves (test/http/openapi.test.ts
// checks the copy is current). Run: npm run openapi
import { writeFile } from "node:fs/promises";
import { serviceOpenApi } from "../src/http/server.js";

await writeFile("docs/openapi.json", JSON.stringify(serviceOpenApi(), null, 2) + "\n");
console.log("wrote docs/openapi.json");
