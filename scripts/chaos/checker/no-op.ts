// Whether the machine made no step for a write: an ok answer with no effect in the store is a lost
// write unless the command's own decider (src/engine/deciders, the rules the server runs) answers
// "unchanged" for its input at some state of the payment inside the answer's window (saving a card
// already saved for that customer; processing a payment its collect processed). Asked of the
// deciders rather than listed, so a decider that starts acting where it did nothing is caught.
import type { PaymentSnapshot } from "../../../machines/fold.js";
import { decideAuthorize } from "../../../src/engine/deciders/authorize.js";
import { decideCancel } from "../../../src/engine/deciders/cancel.js";
import { decideCapture } from "../../../src/engine/deciders/capture.js";
import { decideCollect } from "../../../src/engine/deciders/collect-payment-method.js";
import type { Decision } from "../../../src/engine/deciders/decision.js";
import { decideRefund } from "../../../src/engine/deciders/refund.js";
import { decideSaveCard } from "../../../src/engine/deciders/save-card.js";
import { AuthorizeInput, CancelInput, CaptureInput, CollectPaymentMethodInput, parseInput, RefundInput, SaveCardInput } from "../../../src/inputs.js";
import type { WriteKind } from "../history.js";
import { windowOf, type Model, type Op } from "./model.js";

type Decider = (body: unknown, state: PaymentSnapshot) => Decision<string>;
const DECIDERS: Partial<Record<WriteKind, Decider>> = {
  authorize: (body, s) => decideAuthorize(parseInput(AuthorizeInput, body), s, {}),
  capture: (body, s) => decideCapture(parseInput(CaptureInput, body), s),
  cancel: (body, s) => decideCancel(parseInput(CancelInput, body), s),
  refund: (body, s) => decideRefund(parseInput(RefundInput, body), s),
  collect: (body, s) => decideCollect(parseInput(CollectPaymentMethodInput, body), s, {}),
  save_card: (body, s) => decideSaveCard(parseInput(SaveCardInput, body), s),
};

/** The op's ok answer is the machine's "nothing to do" at some state of its window (and names the card saved, if it names one). */
export function answeredWithoutStep(model: Model, op: Op): boolean {
  const decide = DECIDERS[op.kind as WriteKind];
  const payment = op.payment_id === null ? undefined : model.payments.get(op.payment_id);
  const ok = op.ok;
  const t = op.tries.find((x) => x.complete === ok);
  if (!decide || !payment || !ok || !t) return false;
  // a replayed answer was decided by an earlier try: from when the first was sent
  const { lower, upper } = windowOf(model, payment.payment_id, op, ok.replayed ? op.invokedAt : t.invoke.t, ok.t);
  for (let p = lower; p <= Math.min(upper, payment.states.length - 1); p++) {
    const s = payment.states[p]!;
    if (s.value === "none") continue;
    const card = ok.ids?.[0];
    if (card !== undefined && s.context.saved_card?.payment_method_id !== card) continue;
    try {
      if ("unchanged" in decide(t.invoke.body, s)) return true;
    } catch {
      // an input the server would refuse: not a no-op
    }
  }
  return false;
}
