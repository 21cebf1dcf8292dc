// The OpenAPI document: served by the API, describing every route it serves, and the copy in
// docs/openapi.json current (regenerate with `npm run openapi`).
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { serviceOpenApi } from "../../src/http/server.js";
import { startApi } from "./harness.js";

describe("OpenAPI document", () => {
  it("is served, describes the answers once, as components, and docs/openapi.json is current", async () => {
    const api = await startApi();
    try {
      const served = (await api.request("GET", "/openapi.json")).body;
      expect(served).toEqual(serviceOpenApi());
      const documented = Object.entries(served.paths as Record<string, object>).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));
      for (const op of ["POST /v1/payment/intent", "GET /v2/payment/intent/{payment_id}", "POST /v1/customer/card", "POST /v2/sdk/process-payment", "GET /healthz"]) expect(documented).toContain(op);
      // answers refer to shared schemas
      expect(served.paths["/v1/payment/auth"].post.responses["200"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/PaymentRecordV1" });
      expect(served.components.schemas.PaymentRecordV2.properties.status.enum).toContain("succeeded");
      // every operation says what a 503 is (the store, a processor, the read models, a shutdown), with Retry-After
      for (const ops of Object.values(served.paths as Record<string, Record<string, { responses: Record<string, { headers?: object }> }>>)) {
        for (const op of Object.values(ops)) expect(op.responses["5XX"]?.headers).toHaveProperty("Retry-After");
      }
      // a numeric reference: a safe integer, as the server checks it
      const reference = served.paths["/v2/payment/intent"].post.requestBody.content["application/json"].schema.properties.external_payment_id;
      expect(reference.anyOf).toContainEqual({ type: "integer", minimum: -(2 ** 53 - 1), maximum: 2 ** 53 - 1 });
      expect(JSON.parse(await readFile("docs/openapi.json", "utf8")), "docs/openapi.json is stale: npm run openapi").toEqual(served);
    } finally {
      await api.close();
    }
  });
});
