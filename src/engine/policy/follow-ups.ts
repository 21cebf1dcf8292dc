// What follows a step on its own (spec §3/§4.4/§4.8): the machine says it, as rules on its states
// (machines/payment.ts: an automatic-capture payment in requires_capture is captured; a
// synchronous-terminal payment that saves its card does so once succeeded, so the token is in that
// answer). This policy turns each rule that applies into the attempt to make; the pipeline
// (../handlers/pipeline.ts) makes it after the commands whose events can make one due (capture,
// authorize, collect and process, a processor's report, the reconciler). It imports no command.
import type { AttemptEvent } from "../../../machines/events.js";
import { followUpRules, guardHolds, type PaymentSnapshot } from "../../../machines/fold.js";
import type { FollowUpRule } from "../../../machines/payment.js";
import { ProcessorRefused } from "../../errors.js";
import { commandAllowed } from "../allowed.js";
import { UNRECORDED } from "../deciders/decision.js";

export interface FollowUp {
  command: FollowUpRule["command"];
  attempt: AttemptEvent;
  /** A failure that leaves the payment standing: the follow-up just did not happen. */
  tolerates?: (error: unknown) => boolean;
}

/** The attempt a follow-up command makes now. */
const ATTEMPTS: Record<FollowUpRule["command"], (payment: PaymentSnapshot) => Omit<FollowUp, "command">> = {
  capture: ({ context }) => ({ attempt: { type: "CaptureAttempted", version: 1, data: { attempt_id: UNRECORDED, amount: context.amount_capturable } } }),
  save_card: ({ context }) => ({
    attempt: { type: "CardSaveAttempted", version: 1, data: { attempt_id: UNRECORDED, external_customer_id: context.intent!.external_customer_id! } },
    // the payment stands; the card just is not on file (e.g. expires before 03/30)
    tolerates: (error) => error instanceof ProcessorRefused,
  }),
};

/** The follow-up of `command` due now: the machine's rule for the state holds and it allows the command. */
function due(payment: PaymentSnapshot, command: FollowUpRule["command"]): FollowUp | null {
  const rule = followUpRules(payment).find((r) => r.command === command);
  if (!rule || !guardHolds(payment, rule.guard as Parameters<typeof guardHolds>[1]) || !commandAllowed(payment, command)) return null;
  return { command, ...ATTEMPTS[command](payment) };
}

export type FollowUpCheck = (payment: PaymentSnapshot) => FollowUp | null;

/** In the order they apply, each once (a capture first: the save follows it). */
export const FOLLOW_UPS: readonly FollowUpCheck[] = [(p) => due(p, "capture"), (p) => due(p, "save_card")];

/** Whether something still follows on its own at this point of the payment. */
export const followUpDue = (payment: PaymentSnapshot): boolean => FOLLOW_UPS.some((check) => check(payment) !== null);
