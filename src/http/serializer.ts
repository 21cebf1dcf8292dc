// Answers serialized from their route's answer schema (fast-json-stringify, the serializer fastify
// uses for a route's response schema) instead of JSON.stringify: the code is generated once per
// schema, so a status read does not walk the record generically (about half JSON.stringify's time
// for a payment record). One definition: the JSON schema is the zod schema's own
// (z.toJSONSchema, as in the OpenAPI document). The bytes are JSON.stringify's: the record's
// fields come in the order the schema lists them (required first, then the optional ones), and
// the HTTP tests check every live answer of a serialized route against JSON.stringify
// (test/http/harness.ts) as well as against its schema.
import fastJson from "fast-json-stringify";
import { z } from "zod";

type JsonSchema = Record<string, unknown>;

/**
 * Only closed objects without unions: fast-json-stringify picks a union's branch by validating
 * the value at run time (a second validator, slower than JSON.stringify), and an open object
 * (additionalProperties) would be serialized generically anyway.
 */
function compilable(schema: unknown): boolean {
  if (Array.isArray(schema)) return schema.every(compilable);
  if (schema === null || typeof schema !== "object") return true;
  const node = schema as JsonSchema;
  if (["anyOf", "oneOf", "allOf", "not", "$ref", "if"].some((k) => k in node)) return false;
  if (node.type === "object" && node.additionalProperties !== false) return false;
  return Object.values(node).every(compilable);
}

/** The JSON schema fastify serializes a route's 200 answers with, or undefined to keep JSON.stringify. */
export function answerSchema(schema: z.ZodType): JsonSchema | undefined {
  const { $schema: _dialect, ...json } = z.toJSONSchema(schema, { io: "output", unrepresentable: "any" }) as JsonSchema;
  return compilable(json) ? json : undefined;
}

/** The serializer of an answer schema (what fastify runs for the route's 200 answers). */
export const serializerOf = (json: JsonSchema): ((answer: unknown) => string) => fastJson(json);
