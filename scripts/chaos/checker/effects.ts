// (a) Every acknowledged operation's effect is in the store exactly once, and no effect exists
// without an invocation. An operation's effect is the event its endpoint appends first under its
// Idempotency-Key (the attempt of a processor call, unless abandoned: then the processor did
// nothing). Events without a key are the system's own (reconciler, processor reports and what
// follows them) and expected. (b) Each payment's events are a path of the machine.
import type { RecordedEvent } from "../../../src/store/port.js";
import type { WriteKind } from "../history.js";
import { anomaly, type Anomaly } from "./anomaly.js";
import { answeredWithoutStep } from "./no-op.js";
import { abandonedAttempts, attemptIdOf, effectsOf, keyOf, TRANSIENT, type Model, type Op } from "./model.js";

/** The event that is each write's effect (present_card: the terminal's report, which carries no key). */
const EFFECT: Record<WriteKind, readonly string[]> = {
  create: ["PaymentIntentCreated"],
  authorize: ["AuthorizationAttempted", "TerminalAuthorizationAttempted"],
  capture: ["CaptureAttempted"],
  cancel: ["VoidAttempted", "PaymentCanceled"],
  refund: ["RefundAttempted"],
  collect: ["PaymentMethodCollected"],
  save_card: ["CardSaveAttempted"],
  present_card: [],
};

/** The operation's effects that stand: its effect events, less attempts the processor did nothing for. */
export function standingEffects(model: Model, op: Op): RecordedEvent[] {
  const kinds = EFFECT[op.kind as WriteKind];
  if (!kinds || op.payment_id === null) return [];
  const abandoned = abandonedAttempts(model.payments.get(op.payment_id)?.events ?? []);
  return effectsOf(model, op).filter((e) => {
    if (!kinds.includes(e.type)) return false;
    const attempt = attemptIdOf(e);
    // a PaymentCanceled naming an attempt is the void's outcome, not a cancel of its own
    if (e.type === "PaymentCanceled") return attempt === null;
    return attempt === null || !abandoned.has(e);
  });
}

const SYSTEM_ACTOR = /^(reconciler|processor:)/;

export function checkEffects(model: Model): Anomaly[] {
  const found: Anomaly[] = [];
  for (const op of model.ops) {
    if (op.key === null || !(op.kind in EFFECT) || op.kind === "present_card") continue;
    const effects = standingEffects(model, op);
    if (effects.length > 1) {
      found.push(anomaly("a", "duplicate_effect", op.payment_id, op.op, `${op.kind} took effect ${effects.length} times: ${effects.map((e) => `${e.type}@${e.revision}`).join(", ")}`));
    }
    if (op.ok && effects.length === 0 && !answeredWithoutStep(model, op)) {
      found.push(anomaly("a", "lost_write", op.payment_id, op.op, `${op.kind} was acknowledged at ${op.ok.t.toFixed(0)} ms but its effect is not in the store`));
    }
    // refused: every try answered, and not with "try again" (then the outcome stays unknown)
    const refusedOnly = op.tries.every((t) => t.complete?.outcome === "refused" && !TRANSIENT.has(t.complete.code ?? ""));
    if (refusedOnly && effects.length > 0) {
      found.push(anomaly("a", "refused_with_effect", op.payment_id, op.op, `${op.kind} was refused (${op.tries.map((t) => t.complete?.code ?? t.complete?.status).join(", ")}) yet ${effects[0]!.type}@${effects[0]!.revision} stands`));
    }
  }
  for (const [key, events] of model.byKey) {
    if (!model.opOfKey.has(key)) found.push(anomaly("a", "effect_without_invocation", paymentOf(events[0]!), null, `${events.map((e) => e.type).join(", ")} under Idempotency-Key ${key}, which no client sent`));
  }
  for (const payment of model.payments.values()) {
    for (const e of payment.events) {
      const actor = String(e.metadata.actor ?? "");
      if (keyOf(e) === null && !SYSTEM_ACTOR.test(actor)) {
        found.push(anomaly("a", "effect_without_invocation", payment.payment_id, null, `${e.type}@${e.revision} by ${actor || "nobody"} carries no Idempotency-Key (every client write sends one)`));
      }
    }
  }
  return found;
}

export function checkPaths(model: Model): Anomaly[] {
  const found: Anomaly[] = [];
  for (const p of model.payments.values()) {
    const gap = p.events.findIndex((e, i) => e.revision !== i);
    if (gap >= 0) found.push(anomaly("b", "not_a_path", p.payment_id, null, `revision ${p.events[gap]!.revision} stored at index ${gap} (a gap or a duplicate revision)`));
    if (p.brokenAt !== null) {
      const e = p.events[p.brokenAt]!;
      const before = p.states[p.states.length - 1]!;
      found.push(anomaly("b", "not_a_path", p.payment_id, null, `${e.type}@${e.revision} is not allowed by the machine after ${before.value}${before.context.attempt ? ` (attempt ${before.context.attempt.type} in flight)` : ""}`));
    }
  }
  return found;
}

const paymentOf = (e: RecordedEvent) => e.stream.replace(/^payment-/, "");
