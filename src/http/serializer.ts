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

const PRE_SERIALIZED = Symbol("pre-serialized answer");

/**
 * An answer already written out as its JSON (a list of payments written once each: src/present/
 * api-versions.ts presentedJson), which the route's serializer sends as it is. Only for routes
 * whose answers are serialized from their schema; JSON.stringify of it throws rather than send `{}`.
 */
export interface PreSerialized {
  readonly [PRE_SERIALIZED]: string;
  toJSON(): never;
}

export const preSerialized = (json: string): PreSerialized => ({
  [PRE_SERIALIZED]: json,
  toJSON() {
    throw new Error("a pre-serialized answer goes through its route's serializer (src/http/serializer.ts)");
  },
});

/** The text of a pre-serialized answer; undefined for any other value. */
export const preSerializedText = (answer: unknown): string | undefined =>
  typeof answer === "object" && answer !== null && PRE_SERIALIZED in answer ? (answer as PreSerialized)[PRE_SERIALIZED] : undefined;

/** The serializer of an answer schema (what fastify runs for the route's 200 answers). */
export function serializerOf(json: JsonSchema): (answer: unknown) => string {
  const serialize = fastJson(json);
  return (answer) => preSerializedText(answer) ?? serialize(answer);
}
