// What follows a step on its own (spec §3/§4.4/§4.8), as rules over the payment the step's events
// led to: an automatic-capture payment that reached requires_capture is captured; a
// synchronous-terminal payment that saves its card does so as soon as it is captured, so the token
// is in that answer (automatic or manual capture). Each rule answers the attempt to make, or null;
// the pipeline (../handlers/pipeline.ts) makes it after the commands whose events can make one due
// (capture, authorize, collect and process, a processor's report, the reconciler). The policy
// imports no command: it says what to attempt, the machine says whether it may.
import type { AttemptEvent } from "../../../machines/events.js";
import type { PaymentSnapshot } from "../../../machines/fold.js";
import { ProcessorRefused } from "../../errors.js";
import { commandAllowed, type Command } from "../allowed.js";
import { UNRECORDED } from "../deciders/decision.js";

export interface FollowUp {
  command: Command;
  attempt: AttemptEvent;
  /** A failure that leaves the payment standing: the follow-up just did not happen. */
  tolerates?: (error: unknown) => boolean;
}

export type FollowUpRule = (payment: PaymentSnapshot) => FollowUp | null;

const automaticCapture: FollowUpRule = (payment) => {
  const { intent, amount_capturable } = payment.context;
  if (intent?.capture_method !== "automatic" || !commandAllowed(payment, "capture")) return null;
  return { command: "capture", attempt: { type: "CaptureAttempted", version: 1, data: { attempt_id: UNRECORDED, amount: amount_capturable } } };
};

const saveOnSynchronousTerminal: FollowUpRule = (payment) => {
  const { intent, terminal } = payment.context;
  const savesOnTerminal = terminal?.terminal_type === "A_sync" && intent!.allow_saving_card && intent!.external_customer_id !== null;
  if (!savesOnTerminal || !commandAllowed(payment, "save_card")) return null;
  return {
    command: "save_card",
    attempt: { type: "CardSaveAttempted", version: 1, data: { attempt_id: UNRECORDED, external_customer_id: intent!.external_customer_id! } },
    // the payment stands; the card just is not on file (e.g. expires before 03/30)
    tolerates: (error) => error instanceof ProcessorRefused,
  };
};

/** The rules, in the order they apply (a capture first: the save follows it). */
export const FOLLOW_UPS: readonly FollowUpRule[] = [automaticCapture, saveOnSynchronousTerminal];

/** Whether something still follows on its own at this point of the payment. */
export const followUpDue = (payment: PaymentSnapshot): boolean => FOLLOW_UPS.some((rule) => rule(payment) !== null);
