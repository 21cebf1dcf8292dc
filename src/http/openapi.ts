// The OpenAPI 3.1 document, generated from the routes' own zod schemas (z.toJSONSchema), so the
// document cannot drift from what the API validates and answers.
import { z } from "zod";
import { routeUrls, type RouteDef } from "./route.js";
import { ProblemOut } from "./schemas.js";

type JsonSchema = { properties?: Record<string, unknown>; required?: string[]; [k: string]: unknown };
const jsonSchema = (schema: z.ZodType, io: "input" | "output") => z.toJSONSchema(schema, { io, unrepresentable: "any" }) as JsonSchema;

/** Answer schemas with a title become shared components (one PaymentRecordV1, not one per path). */
function componentsOf(schemas: Record<string, unknown>) {
  return (schema: JsonSchema): unknown => {
    const title = typeof schema.title === "string" ? schema.title : undefined;
    if (!title) {
      // titled schemas nested in an untitled one (a list's items)
      const items = (schema.properties?.data as JsonSchema | undefined)?.items as JsonSchema | undefined;
      if (items?.title) return { ...schema, properties: { ...schema.properties, data: { type: "array", items: componentsOf(schemas)(items) } } };
      return schema;
    }
    const { $schema: _dialect, ...rest } = schema;
    schemas[title] ??= rest;
    return { $ref: `#/components/schemas/${title}` };
  };
}

export function openApiDocument(routes: readonly RouteDef[], { version = "0.1.0" } = {}) {
  const paths: Record<string, Record<string, unknown>> = {};
  const schemas: Record<string, unknown> = {};
  const shared = componentsOf(schemas);
  const content = { "application/problem+json": { schema: shared(jsonSchema(ProblemOut, "output")) } };
  const problem = { description: "Problem details (RFC 9457)", content };
  // what a retry with the same Idempotency-Key (and body) may clear: nothing was acknowledged
  const unavailable = {
    description: "Problem details (RFC 9457): 503 `store_unavailable`, `processor_unavailable`, `read_model_behind` or `service_stopping`; nothing was acknowledged, retry after Retry-After (with the same Idempotency-Key)",
    headers: { "Retry-After": { description: "Seconds to wait before retrying", schema: { type: "integer", minimum: 1 } } },
    content,
  };
  for (const def of routes) {
    for (const { version: apiVersion, url } of routeUrls(def)) {
      const path = url.replace(/:(\w+)/g, "{$1}");
      const input = jsonSchema(def.input, "input");
      const operation: Record<string, unknown> = {
        operationId: `${def.method.toLowerCase()}${url.replace(/[^A-Za-z0-9]+(\w)?/g, (_, c: string | undefined) => (c ?? "").toUpperCase())}`,
        summary: def.summary,
        description: [def.extension ? "**Extension** beyond the payment service interface." : null, def.description ?? null].filter(Boolean).join("\n\n") || undefined,
        tags: [def.extension ? "extensions" : apiVersion],
        // {}: no API key, the client secret in the body instead
        security: def.auth === "api_key" ? [{ apiKey: [] }] : def.auth === "api_key_or_client_secret" ? [{ apiKey: [] }, {}] : [],
        responses: {
          "200": { description: "OK", content: { [def.contentType?.split(";")[0] ?? "application/json"]: { schema: shared(jsonSchema(def.response(apiVersion), "output")) } } },
          "4XX": problem,
          "5XX": unavailable,
        },
      };
      const inPath = (name: string) => url.includes(`:${name}`);
      if (def.method === "POST") {
        // a POST's path parameters join its body on the server (./route.ts): the body schema is the rest
        const body = { ...input, properties: Object.fromEntries(Object.entries(input.properties ?? {}).filter(([name]) => !inPath(name))), required: (input.required ?? []).filter((name) => !inPath(name)) };
        operation.requestBody = { required: true, content: { "application/json": { schema: body } } };
        operation.parameters = [
          ...Object.entries(input.properties ?? {}).filter(([name]) => inPath(name)).map(([name, schema]) => ({ name, in: "path", required: true, schema })),
          {
            name: "Idempotency-Key",
            in: "header",
            required: false,
            description: "Retries with the same key and body get the first answer without a second effect (kept 24 h).",
            schema: { type: "string", maxLength: 255 },
          },
        ];
      } else {
        operation.parameters = Object.entries(input.properties ?? {}).map(([name, schema]) => ({
          name,
          in: inPath(name) ? "path" : "query",
          required: inPath(name) || (input.required ?? []).includes(name),
          schema,
        }));
      }
      (paths[path] ??= {})[def.method.toLowerCase()] = operation;
    }
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "cardflow payment API",
      version,
      description:
        "The payment service interface (card-present and card-on-file payments). /v1 writes the final success status as `success`, /v2 as `succeeded`. Operations tagged `extensions` go beyond the interface.",
    },
    components: { schemas, securitySchemes: { apiKey: { type: "http", scheme: "bearer", description: "An API key of one merchant account (`cardflow accounts create`)." } } },
    paths,
  };
}
