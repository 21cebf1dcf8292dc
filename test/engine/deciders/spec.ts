// Given/when/then for the deciders (src/engine/deciders/), after Emmett's DeciderSpecification,
// small and our own: given the payment's past events (folded through the machine, as the engine
// loads them), when a command's input (with the context its handler gathered), then what the
// decider decided. Pure: no store, no processor, no clock.
//
//   decider(decideCapture).given([created(), ...authorized()]).when({ ...ref, amount: "4" })
//     .thenAttempts(captureAttempted("4.00"))
import { expect } from "vitest";
import type { AttemptEvent, PaymentEvent } from "../../../machines/events.js";
import { applyPaymentEvent, initialPaymentSnapshot, type PaymentSnapshot } from "../../../machines/fold.js";
import type { TerminalRecord } from "../../../projections/terminals.js";
import { CardflowError } from "../../../src/errors.js";
import type { Decide, Decision } from "../../../src/engine/deciders/decision.js";

/** The payment after these events; each must be one the machine allows (a given it refuses is a broken spec). */
export function paymentAfter(events: PaymentEvent[]): PaymentSnapshot {
  return events.reduce((snapshot, event, i) => {
    const next = applyPaymentEvent(snapshot, event);
    if (!next) throw new Error(`given event ${i} (${event.type}) is not allowed in ${snapshot.value}`);
    return next;
  }, initialPaymentSnapshot);
}

/** What a refusal is checked on: its code always, the rest when the spec names it. */
export interface Refused {
  status?: number;
  param?: string | null;
  /** A part of the message, or a pattern it matches. */
  message?: string | RegExp;
  /** For the machine's refusals (409): the status named and the steps allowed instead. */
  current_status?: string;
  allowed_next_steps?: string[];
}

/** A readable account of a decision, so a failing spec shows what was decided instead. */
function described(decision: Decision<string>): unknown {
  if ("refuse" in decision) {
    const error = decision.refuse;
    return { refused: error.code, message: error.message };
  }
  return decision;
}

export function decider<Input, Context extends object, Need extends string = never>(decide: Decide<Input, Context, Need>) {
  return {
    given(events: PaymentEvent[]) {
      const payment = paymentAfter(events);
      return {
        when(input: Input, context: Context = {} as Context) {
          const decision = decide(input, payment, context);
          return outcome(decision as Decision<string>);
        },
      };
    },
  };
}

function outcome(decision: Decision<string>) {
  return {
    decision,
    /** Events appended without a processor call (a collecting terminal stopped first: stopTerminal). */
    thenAppends(events: PaymentEvent[], also: { stopTerminal?: string } = {}) {
      expect(described(decision)).toEqual({ append: events, ...also });
    },
    /** A bracketed processor call: this attempt (its id given when recorded), on this terminal for a terminal authorization, with these events ahead of it. */
    thenAttempts(attempt: AttemptEvent, also: { terminal?: TerminalRecord; before?: PaymentEvent[] } = {}) {
      expect(described(decision)).toEqual({ attempt, ...also });
    },
    /** Nothing appended; the command answers the payment as it stands. */
    thenUnchanged() {
      expect(described(decision)).toEqual({ unchanged: true });
    },
    /** The decider asks its handler to gather this before it decides again. */
    thenNeeds(need: string) {
      expect(described(decision)).toEqual({ need });
    },
    /** Nothing appended; the command answers this refusal (its code, and what else the spec names). */
    thenRefuses(code: string, expected: Refused = {}) {
      expect(described(decision)).toMatchObject({ refused: code });
      const error = (decision as { refuse: CardflowError }).refuse;
      expect(error).toBeInstanceOf(CardflowError);
      const { message, ...fields } = expected;
      if (message !== undefined) expect(error.message).toMatch(message);
      const details = { status: (error as { status?: number }).status, param: error.param, ...error.details() };
      expect(details).toMatchObject(fields);
    },
  };
}
