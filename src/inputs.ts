// Inputs of the engine's commands, in the spec's field names (§2.1, §4). The HTTP API validates
// request bodies with these same schemas, so a library caller and an HTTP caller get one answer.
import { z } from "zod";
import { CaptureMethod, PaymentMethodType, Processor, TerminalType } from "../machines/events.js";
import { InvalidRequest } from "./errors.js";
import { misspelled } from "./misspelled.js";

/** No control character (C0, DEL, C1; NUL cannot be stored in PostgreSQL text), no lone UTF-16 surrogate (not text in UTF-8). */
const UNSTORABLE = /\p{Cc}|\p{Cs}/u;
/** Text a caller names or labels things with: kept exactly as sent, so what cannot be kept is refused. */
export const Text = (max: number) =>
  z
    .string()
    .max(max, `must be at most ${max} characters`)
    .refine((s) => !UNSTORABLE.test(s), "has a control character or a lone surrogate: send printable UTF-8 text");
/** A name kept exactly as sent: white space around it is refused, not trimmed. */
const Exact = (max: number, what = "it") => Text(max).refine((s) => s.trim() === s, `has white space around it: send ${what} alone`);
/** An identifier or reference field: exactly as sent, never empty. */
export const Id = Exact(255, "the identifier").min(1, "must not be empty");
/** A count in a query string (digits only: "20"; not "0x10", "1e1" nor " 10") or a number, from min to max. */
export const Count = (min: number, max: number) =>
  z.preprocess(
    // what coercion would read as a number but a count is not written as: refused (NaN is no number)
    (value) => (typeof value === "string" ? (/^[0-9]+$/.test(value) ? Number(value) : Number.NaN) : value),
    z.number(`expected a whole number from ${min} to ${max}, written in digits (e.g. 20)`).int(`expected a whole number from ${min} to ${max}`).min(min).max(max),
  );
/**
 * A paging cursor given back in a query string (opaque), worded as the other query parameters are
 * ("expected …, got …"): one longer than `max` is none this API gave; `min` 1: not empty either.
 */
export const Cursor = (max: number, what: string, min = 0) => {
  const error = (issue: { input?: unknown }) => `expected ${what} (${min ? `${min} to ${max}` : `at most ${max}`} characters), got ${String(issue.input).length} characters`;
  return (min ? z.string().min(min, { error }) : z.string()).max(max, { error });
};
/** Amounts arrive as a JSON string or number (spec §2.1); src/money.ts checks them against the currency. */
export const AmountInput = z.union([z.string(), z.number()], { error: 'expected a decimal string such as "25.00", or a number' });

export const OpenAccountInput = z.strictObject({
  external_account_id: Id,
  processor: Processor.default("A"),
  currency: z.string().regex(/^[A-Za-z]{3}$/, "a three-letter ISO 4217 code").transform((c) => c.toUpperCase()).default("USD"),
});

export const RegisterTerminalInput = z.strictObject({
  external_account_id: Id,
  terminal_type: TerminalType,
  // null or left out: none; empty text is refused like an empty identifier (it would list as a blank label)
  label: Exact(255).min(1, "must not be empty (leave it out or send null for none)").nullable().optional(),
  serial_number: Exact(255).min(1, "must not be empty (leave it out or send null for none)").nullable().optional(),
});

/**
 * A string, or a whole number kept exactly: a fraction or a number beyond ±(2^53 - 1) may have
 * lost digits when the JSON was parsed (12345678.123456789 reads as 12345678.12345679, 100.10 as
 * 100.1), so they are refused (send such references as strings).
 */
const ExternalPaymentId = z.union([
  Id,
  z
    .number()
    .refine(Number.isSafeInteger, "a number reference must be a whole number within ±(2^53 - 1) (a fraction or a larger number may lose digits in JSON); send it as a string")
    // what the refinement checks, for the OpenAPI document (a refinement has no JSON Schema; int() would lose this message in the union's)
    .meta({ type: "integer", minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER }),
], { error: "expected a string or a whole number" });

export const CreateIntentInput = z
  .strictObject({
    external_account_id: Id,
    amount: AmountInput,
    payment_method_types: PaymentMethodType,
    capture_method: CaptureMethod,
    external_payment_id: ExternalPaymentId.optional(),
    external_transaction_id: Id.optional(),
    payment_method_id: Id.optional(),
    external_customer_id: Id.optional(),
    allow_saving_card: z.boolean().optional(),
  })
  .superRefine((v, ctx) => {
    if (v.payment_method_id !== undefined && v.external_customer_id === undefined) {
      ctx.addIssue({ code: "custom", path: ["external_customer_id"], message: "is required with payment_method_id (stored-card charge)" });
    }
    if (v.payment_method_id !== undefined && v.payment_method_types !== "card") {
      ctx.addIssue({ code: "custom", path: ["payment_method_types"], message: "must be card for a stored-card charge" });
    }
  });

const PaymentRef = { external_account_id: Id, payment_id: Id };

export const AuthorizeInput = z.strictObject({
  ...PaymentRef,
  terminal_id: Id.optional(),
  external_payment_id: ExternalPaymentId.optional(),
});

export const CaptureInput = z.strictObject({ ...PaymentRef, amount: AmountInput });

export const CancelInput = z.strictObject({
  ...PaymentRef,
  cancellation_reason: z.enum(["requested_by_customer", "duplicate", "fraudulent", "abandoned"]).optional(),
});

export const RefundInput = z.strictObject({
  ...PaymentRef,
  /** Omitted: refund everything still refundable. */
  amount: AmountInput.optional(),
  reason: Text(500).optional(),
});

/** Spec §4.7, "called from a client or a server": a client without an API key sends the payment's client secret. */
export const SaveCardInput = z.strictObject({ ...PaymentRef, external_customer_id: Id, client_secret: Id.optional() });

export const GetPaymentInput = z.strictObject(PaymentRef);

/** An operator's record that a late answer a payment did not take was settled with the processor. */
export const SettleLateAnswerInput = z.strictObject({ payment_id: Id, attempt_id: Id, note: Text(2000).refine((n) => n.trim() !== "", "say what was done with the processor") });
export type SettleLateAnswerRequest = z.input<typeof SettleLateAnswerInput>;

/** The ids the lists take as arguments (`listTerminals(accountId)`…), checked as the commands' fields are. */
export const AccountIds = z.strictObject({ external_account_id: Id });
export const CustomerIds = z.strictObject({ external_account_id: Id, external_customer_id: Id });

/** Processor B client SDK: collect a card for an intent, authorised by its client secret. */
export const CollectPaymentMethodInput = z.strictObject({
  client_secret: Id,
  /** A sandbox test card number (the simulated reader "reads" it). */
  card_number: z.string().regex(/^\d{12,19}$/, "12 to 19 digits").optional(),
  /** The processor B reader that read the card; omitted for a card-not-present form. */
  terminal_id: Id.optional(),
});

/** Processor B client SDK: process the payment whose card was collected, authorised by its client secret. */
export const ProcessPaymentInput = z.strictObject({ client_secret: Id });

/** What a caller sends each command (as the schemas take it: amounts as text or numbers, defaults left out). */
export type OpenAccountRequest = z.input<typeof OpenAccountInput>;
export type RegisterTerminalRequest = z.input<typeof RegisterTerminalInput>;
export type CreateIntentRequest = z.input<typeof CreateIntentInput>;
export type AuthorizeRequest = z.input<typeof AuthorizeInput>;
export type CaptureRequest = z.input<typeof CaptureInput>;
export type CancelRequest = z.input<typeof CancelInput>;
export type RefundRequest = z.input<typeof RefundInput>;
export type SaveCardRequest = z.input<typeof SaveCardInput>;
export type GetPaymentRequest = z.input<typeof GetPaymentInput>;
export type CollectPaymentMethodRequest = z.input<typeof CollectPaymentMethodInput>;
export type ProcessPaymentRequest = z.input<typeof ProcessPaymentInput>;

/** The inputs as the commands receive them, parsed. */
export type OpenAccountInput = z.output<typeof OpenAccountInput>;
export type RegisterTerminalInput = z.output<typeof RegisterTerminalInput>;
export type CreateIntentInput = z.output<typeof CreateIntentInput>;
export type AuthorizeInput = z.output<typeof AuthorizeInput>;
export type CaptureInput = z.output<typeof CaptureInput>;
export type CancelInput = z.output<typeof CancelInput>;
export type RefundInput = z.output<typeof RefundInput>;
export type SaveCardInput = z.output<typeof SaveCardInput>;
export type CollectPaymentMethodInput = z.output<typeof CollectPaymentMethodInput>;
export type ProcessPaymentInput = z.output<typeof ProcessPaymentInput>;

/**
 * What parseInput returned, with its schema: the HTTP API parses a request with the engine's schema
 * and hands the engine what it parsed, which the engine's handler then takes as it is (inputs are
 * parsed once). Another schema, or any other object, is parsed.
 */
const parsed = new WeakMap<object, z.ZodType>();

/**
 * Parses input with a schema, turning what is wrong into one InvalidRequest. A misspelled field is
 * both unknown and (usually) leaves a required one missing: the message names both, with the
 * likely intended name ("unknown field: ammount (did you mean amount?); amount: is required"); an
 * optional one misspelled is named the same way ("unknown field: resaon (did you mean reason?)").
 * Otherwise the first issue, naming its field; a field that is absent says "is required". A read's
 * input is its query string: its unknown keys are named "query parameter"s.
 */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, noun: "field" | "query parameter" = "field"): z.output<S> {
  if (typeof input === "object" && input !== null && parsed.get(input) === schema) return input as z.output<S>;
  input = withoutNulls(schema, input);
  const result = schema.safeParse(input);
  if (result.success) {
    if (typeof result.data === "object" && result.data !== null) parsed.set(result.data, schema);
    return result.data;
  }
  const issues = result.error.issues;
  const unknown = issues.flatMap((i) => (i.code === "unrecognized_keys" ? i.keys.map((key) => [...i.path.map(String), key].join(".")) : []));
  const missing = issues.filter((i) => isMissing(i, input)).map((i) => i.path.map(String).join("."));
  if (unknown.length) {
    // an optional field misspelled leaves nothing missing: its likely name is one of the fields not sent
    const unsent = schema instanceof z.ZodObject && typeof input === "object" && input !== null ? Object.keys(schema.shape).filter((field) => !Object.hasOwn(input, field)) : [];
    const named = unknown.map((key) => {
      const meant = missing.find((field) => misspelled(key, field)) ?? unsent.find((field) => !key.includes(".") && misspelled(key, field)) ?? partOfOne(key, unsent);
      return meant ? `${key} (did you mean ${meant}?)` : key;
    });
    const alsoMissing = missing.map((field) => `; ${field}: is required`).join("");
    throw new InvalidRequest(`unknown ${noun}${unknown.length > 1 ? "s" : ""}: ${named.join(", ")}${alsoMissing}`, unknown[0]!, "unknown_parameter");
  }
  const issue = issues[0]!;
  const param = issue.path.map(String).join(".") || null;
  if (isMissing(issue, input)) throw new InvalidRequest(`${param}: is required`, param, "parameter_missing");
  // a field required with another (a refinement's "is required with …"), not sent: missing too
  const requiredWith = issue.code === "custom" && issue.message.startsWith("is required") && absent(issue.path, input);
  throw new InvalidRequest(`${param ?? "body"}: ${worded(issue, input)}`, param, requiredWith ? "parameter_missing" : "parameter_invalid");
}

/**
 * An optional field sent as null is taken as not sent (a client that serialises its unset fields
 * as null), except an amount (a refund's, a tip): a refund's amount left out refunds everything, a
 * null one is refused as a likely bug rather than taken for that.
 */
export function withoutNulls(schema: z.ZodType, input: unknown): unknown {
  if (!(schema instanceof z.ZodObject) || typeof input !== "object" || input === null || Array.isArray(input)) return input;
  const shape = schema.shape as Record<string, z.ZodType>;
  const absent = Object.keys(input).filter((key) => {
    const field = shape[key];
    if ((input as Record<string, unknown>)[key] !== null || field === undefined) return false;
    const money = field instanceof z.ZodOptional && field.unwrap() === AmountInput;
    return !money && field.safeParse(undefined).success && !field.safeParse(null).success;
  });
  if (absent.length === 0) return input;
  const rest = { ...(input as Record<string, unknown>) };
  for (const key of absent) delete rest[key];
  return rest;
}

/** zod's own wording of a type or an option ("Invalid input: expected string, received number") in the API's words; a schema's own message as it is. */
function worded(issue: z.core.$ZodIssue, input: unknown): string {
  const value = valueAt(issue.path, input);
  if (issue.code === "invalid_type" && issue.message.startsWith("Invalid input")) {
    const hint = issue.path.join(".") === "external_transaction_id" && typeof value === "number" ? " (a numeric reference goes in external_payment_id)" : "";
    return `expected ${issue.expected === "object" && issue.path.length === 0 ? "a JSON object" : withArticle(issue.expected)}, got ${kindOf(value)}${hint}`;
  }
  if (issue.code === "invalid_value" && issue.message.startsWith("Invalid option")) {
    return `expected one of ${issue.values.map(String).join(", ")}, got ${typeof value === "string" ? JSON.stringify(value) : kindOf(value)}`;
  }
  return issue.message;
}

const withArticle = (type: string) => (/^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`);
const kindOf = (value: unknown) => (value === null ? "null" : Array.isArray(value) ? "an array" : withArticle(typeof value));

function valueAt(path: readonly PropertyKey[], input: unknown): unknown {
  let value = input;
  for (const key of path) value = value !== null && typeof value === "object" ? (value as Record<PropertyKey, unknown>)[key] : undefined;
  return value;
}

/** The one field not sent whose first or last word `key` is (`reason` for cancellation_reason), from four letters (not `id`). */
function partOfOne(key: string, fields: readonly string[]): string | undefined {
  if (key.length < 4 || key.includes(".")) return undefined;
  const holding = fields.filter((field) => field.endsWith(`_${key}`) || field.startsWith(`${key}_`));
  return holding.length === 1 ? holding[0] : undefined;
}

/** A type issue on a field the input does not have (refinements keep their own message). */
function isMissing(issue: z.core.$ZodIssue, input: unknown): boolean {
  return ["invalid_type", "invalid_union", "invalid_value"].includes(issue.code) && absent(issue.path, input);
}

/** Whether the input has nothing at this (non-empty) path. */
function absent(path: readonly PropertyKey[], input: unknown): boolean {
  return path.length > 0 && valueAt(path, input) === undefined;
}
