// What a processor adapter may answer, as schemas: one definition for the example adapter, which
// checks its processor's JSON with them (./http-adapter.ts), and for the engine, which checks every
// adapter's answer with them before it becomes an event (../engine/handlers/processor-calls.ts). An
// answer that is not one of the port's types is an unknown outcome, never an approval: the check
// throws a plain Error (not a CardflowError, which would say the processor did nothing).
import { z } from "zod";
import { Authorization } from "../../machines/events.js";
import { LAST_ERROR_CODES } from "../../machines/failures.js";
import type { AuthorizationOutcome, CaptureOutcome, ProcessorEvent, RecordedOutcome } from "./port.js";

export interface AnswerSchemas {
  Outcome: z.ZodType<AuthorizationOutcome>;
  CaptureOutcome: z.ZodType<CaptureOutcome>;
  Refund: z.ZodType<{ refund_id: string }>;
  SavedCard: z.ZodType<{ payment_method_id: string }>;
  Recorded: z.ZodType<RecordedOutcome>;
  Event: z.ZodType<ProcessorEvent>;
}

/**
 * The answers' schemas. strict: a key the port does not know makes the answer malformed (the
 * example adapter's processor JSON); else it is dropped (an in-process adapter's answer may carry
 * its own bookkeeping, as the simulators' ledger entries carry the amount asked for).
 */
export function answerSchemas(strict: boolean): AnswerSchemas {
  const object = <S extends z.ZodRawShape>(shape: S) => (strict ? z.strictObject(shape) : z.object(shape));
  const Outcome: z.ZodType<AuthorizationOutcome> = z.discriminatedUnion("kind", [
    object({ kind: z.enum(["authorized", "captured", "capture_requested"]), authorization: Authorization }),
    object({ kind: z.literal("failed"), last_error: z.string(), last_error_code: z.enum(LAST_ERROR_CODES).nullable() }),
  ]);
  const CaptureOutcome = object({ kind: z.enum(["captured", "capture_requested"]) });
  // a refund's and a saved card's answers carry their id; other keys are dropped even when strict
  const Refund = z.object({ refund_id: z.string().min(1) });
  const SavedCard = z.object({ payment_method_id: z.string().min(1) });
  const Recorded: z.ZodType<RecordedOutcome> = z.discriminatedUnion("call", [
    object({ call: z.literal("authorize"), outcome: Outcome }),
    object({ call: z.literal("start_terminal"), outcome: Outcome.nullable() }),
    object({ call: z.literal("capture"), outcome: CaptureOutcome }),
    object({ call: z.literal("void") }),
    object({ call: z.literal("refund"), refund_id: z.string().min(1) }),
    object({ call: z.literal("save_card"), payment_method_id: z.string().min(1) }),
    object({ call: z.literal("refused"), code: z.string(), message: z.string() }),
  ]);
  const Event: z.ZodType<ProcessorEvent> = z.union([Outcome, object({ kind: z.literal("capture_settled"), amount: z.string().regex(/^\d+(\.\d+)?$/) })]);
  return { Outcome, CaptureOutcome, Refund, SavedCard, Recorded, Event };
}

/** What the engine checks adapters' answers with (keys the port does not know dropped). */
export const ANSWERS = answerSchemas(false);

/** What was wrong with an answer, short: zod's first issue, with where it was. */
export function whatWasWrong(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return "malformed";
  return issue.path.length > 0 ? `${issue.path.join(".")}: ${issue.message}` : issue.message;
}

/**
 * `answer` as `schema` has it; else a plain Error naming the processor, the call and what was
 * wrong (an unknown outcome: the attempt stays open for the reconciler).
 */
export function checkedAnswer<T>(schema: z.ZodType<T>, answer: unknown, processor: string, call: string): T {
  const parsed = schema.safeParse(answer);
  if (parsed.success) return parsed.data;
  throw new Error(`processor ${processor} answered ${call} with a malformed answer (outcome unknown): ${whatWasWrong(parsed.error)}`);
}
