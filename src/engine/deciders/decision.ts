// What a decider answers: pure, from the command's input, the payment's state and the context the
// handler gathered. A refusal is an answer like any other (the machine's, or the input's): the
// pipeline (../handlers/pipeline.ts) throws it; everything else it carries out.
import type { AttemptEvent, PaymentEvent } from "../../../machines/events.js";
import type { PaymentSnapshot } from "../../../machines/fold.js";
import type { TerminalRecord } from "../../../projections/terminals.js";
import { AttemptInFlight, TransitionNotAllowed, type CardflowError } from "../../errors.js";
import { allowedCommands, commandAllowed, type Command } from "../allowed.js";

export type Decision<Need extends string = never> =
  /** Nothing is appended; the command answers this error. */
  | { refuse: CardflowError }
  /** The decision needs more context (a lookup, a card read): the handler gathers it, then the decider decides again. */
  | { need: Need }
  /**
   * A processor call, bracketed: this attempt event (its attempt_id given when it is recorded,
   * unless a retry makes an abandoned call again under its id: ../outcomes.ts sameCallAgain)
   * before the call, the outcome after. `terminal`: the terminal a terminal authorization starts on.
   * `before`: events that go with the attempt, in its append, ahead of it (no call of their own).
   */
  | { attempt: AttemptEvent; terminal?: TerminalRecord; before?: PaymentEvent[] }
  /** Events appended without a processor call; `stopTerminal`: a collecting terminal is stopped first (no money moves). */
  | { append: PaymentEvent[]; stopTerminal?: string }
  /** Nothing to do: the command answers the payment as it stands. */
  | { unchanged: true };

/** A decider: the rule of one command. */
export type Decide<Input, Context extends object, Need extends string = never> = (input: Input, payment: PaymentSnapshot, context: Context) => Decision<Need>;

/** The attempt id an attempt event carries until the pipeline records it with a new one. */
export const UNRECORDED = "probe";

/** The machine refuses the command now: 409, naming the status and what is allowed instead. */
export function refusal(payment: PaymentSnapshot, command: string, reason?: string): CardflowError {
  const { attempt, intent } = payment.context;
  const paymentId = intent?.payment_id ?? "";
  if (attempt) {
    // another process's call (or one a crash left open, until the reconciler closes it)
    return new AttemptInFlight(`payment ${paymentId} has a processor call in flight (${attempt.type} ${attempt.data.attempt_id}); retry shortly`);
  }
  return new TransitionNotAllowed(paymentId, command, String(payment.value), allowedCommands(payment), reason);
}

/** The refusal when the machine does not allow the command now (asked of the machine: ../allowed.ts); null when it does. */
export function unlessAllowed(payment: PaymentSnapshot, command: Command, reason?: string): { refuse: CardflowError } | null {
  return commandAllowed(payment, command) ? null : { refuse: refusal(payment, command, reason) };
}
