// The replay ceiling: the payment lifecycle written by hand as a plain reducer (a switch per
// status and event type, no machine), with the same guards, the same money arithmetic and the
// same context shape as machines/payment.ts. The replay benchmark checks that it reaches the very
// same states as the machine over every event it folds; it is a yardstick, not a second source
// of truth, and nothing in cardflow uses it.
import type { Authorization, PaymentEvent, PaymentEventOf } from "../../machines/events.js";
import { failureLeadsTo } from "../../machines/failures.js";
import type { PaymentState } from "../../machines/fold.js";
import type { PaymentContext } from "../../machines/payment.js";
import { amounts, formatAmount } from "../../src/money.js";

type Ctx = PaymentContext;
type Status = PaymentState["status"];
type Amounted = { amount: string; authorization?: Authorization | null };

const { compare, sum, difference } = amounts;
const fmt = (c: Ctx, v: string | 0) => formatAmount(v, c.intent!.currency);
const covers = (c: Ctx, a: Authorization) => compare(a.amount_authorized, sum(sum(c.intent!.amount, a.tip_amount), a.donation_amount)) === 0;
const capturesInFull = (c: Ctx, d: Amounted) => !!d.authorization && covers(c, d.authorization) && compare(d.amount, d.authorization.amount_authorized) === 0;
const stored = (c: Ctx) => c.intent!.payment_method_id !== null;
const automatic = (c: Ctx) => c.intent!.capture_method === "automatic";

function authorized(c: Ctx, a: Authorization | null | undefined): Ctx {
  if (!a) return c;
  const { card, ...rest } = a;
  const amount = fmt(c, a.amount_authorized);
  return { ...c, card, authorization: rest, amount_authorized: amount, amount_capturable: amount, last_error: null, last_error_code: null };
}
const captureRequested = (c: Ctx, d: Amounted): Ctx => ({ ...c, amount_capture_requested: fmt(c, d.amount), amount_capturable: fmt(c, 0) });
const captured = (c: Ctx, d: Amounted): Ctx => ({ ...c, amount_captured: fmt(c, d.amount), amount_capturable: fmt(c, 0), amount_capture_requested: fmt(c, 0) });
const released = (c: Ctx): Ctx => ({ ...c, amount_capturable: fmt(c, 0) });
const failed = (c: Ctx, d: PaymentEventOf<"AuthorizationFailed">["data"]): Ctx => ({ ...c, last_error: d.last_error, last_error_code: d.last_error_code });

function savable(c: Ctx, d: PaymentEventOf<"CardSaved">["data"]): boolean {
  const i = c.intent!;
  return c.card !== null && c.saved_card === null && i.payment_method_id === null && c.terminal?.terminal_type !== "A_async" && (i.external_customer_id === null || i.external_customer_id === d.external_customer_id);
}
const saved = (c: Ctx, d: PaymentEventOf<"CardSaved">["data"]): Ctx => ({ ...c, saved_card: { payment_method_id: d.payment_method_id, external_customer_id: d.external_customer_id } });

const to = (status: Status, context: Ctx): PaymentState => ({ status, context });

/** requires_payment_method and error: authorize again, on a terminal, a reader or the card on file. */
function retry(c: Ctx, e: PaymentEvent): PaymentState | null {
  const i = c.intent!;
  switch (e.type) {
    case "TerminalAuthorizationStarted":
      if (i.payment_method_types !== "card_present" || e.data.terminal_type === "B_reader") return null;
      return to("payment_method_requested", { ...c, terminal: { ...e.data }, processor: "A", last_error: null, last_error_code: null });
    case "PaymentMethodCollected": {
      const tid = e.data.terminal_id;
      const ok = i.payment_method_types === "card_present" ? tid !== null : i.processor === "B" && i.payment_method_id === null && tid === null;
      if (!ok) return null;
      return to("payment_method_requested", { ...c, card: e.data.card, processor: "B", terminal: tid === null ? null : { terminal_id: tid, terminal_type: "B_reader" }, last_error: null, last_error_code: null });
    }
    case "PaymentAuthorized":
      return stored(c) && !automatic(c) && covers(c, e.data) ? to("requires_capture", authorized(c, e.data)) : null;
    case "CaptureRequested":
      return stored(c) && automatic(c) && capturesInFull(c, e.data) ? to("capture_requested", captureRequested(authorized(c, e.data.authorization), e.data)) : null;
    case "PaymentCaptured":
      return stored(c) && automatic(c) && capturesInFull(c, e.data) ? to("succeeded", captured(authorized(c, e.data.authorization), e.data)) : null;
    case "AuthorizationFailed":
      return stored(c) ? to(failureLeadsTo(e.data.last_error_code), failed(c, e.data)) : null;
    case "PaymentCanceled":
      return to("canceled", released(c));
    default:
      return null;
  }
}

export function reduce(state: PaymentState, e: PaymentEvent): PaymentState | null {
  const c = state.context;
  switch (state.status) {
    case "none": {
      if (e.type !== "PaymentIntentCreated") return null;
      const zero = formatAmount(0, e.data.currency);
      const i = e.data;
      return to("requires_payment_method", { ...c, intent: i, processor: i.processor, card: i.stored_card, amount_authorized: zero, amount_capturable: zero, amount_capture_requested: zero, amount_captured: zero, amount_refunded: zero });
    }
    case "requires_payment_method":
    case "error":
      return retry(c, e);
    case "payment_method_requested":
      switch (e.type) {
        case "PaymentAuthorized":
          return covers(c, e.data) ? to("requires_capture", authorized(c, e.data)) : null;
        case "CaptureRequested":
          return automatic(c) && capturesInFull(c, e.data) ? to("capture_requested", captureRequested(authorized(c, e.data.authorization), e.data)) : null;
        case "PaymentCaptured":
          return automatic(c) && capturesInFull(c, e.data) ? to("succeeded", captured(authorized(c, e.data.authorization), e.data)) : null;
        case "AuthorizationFailed":
          return to(failureLeadsTo(e.data.last_error_code), failed(c, e.data));
        case "PaymentCanceled":
          return to("canceled", released(c));
        default:
          return null;
      }
    case "requires_capture":
      switch (e.type) {
        case "CaptureRequested":
        case "PaymentCaptured": {
          if (e.data.authorization || compare(e.data.amount, "0") <= 0 || compare(e.data.amount, c.amount_authorized) > 0) return null;
          return e.type === "CaptureRequested" ? to("capture_requested", captureRequested(c, e.data)) : to("succeeded", captured(c, e.data));
        }
        case "CardSaved": {
          const i = c.intent!;
          return savable(c, e.data) && i.processor === "B" && i.payment_method_types === "card" && i.allow_saving_card ? to("requires_capture", saved(c, e.data)) : null;
        }
        case "PaymentCanceled":
          return to("canceled", released(c));
        default:
          return null;
      }
    case "capture_requested":
      if (e.type !== "PaymentCaptured" || e.data.authorization || compare(e.data.amount, c.amount_capture_requested) !== 0) return null;
      return to("succeeded", captured(c, e.data));
    case "succeeded":
      switch (e.type) {
        case "PaymentRefunded": {
          const amount = e.data.amount;
          if (compare(amount, "0") <= 0 || compare(amount, difference(c.amount_captured, c.amount_refunded)) > 0) return null;
          return to("succeeded", { ...c, amount_refunded: fmt(c, sum(c.amount_refunded, amount)) });
        }
        case "CardSaved": {
          const i = c.intent!;
          return savable(c, e.data) && (i.allow_saving_card || i.external_customer_id !== null) ? to("succeeded", saved(c, e.data)) : null;
        }
        default:
          return null;
      }
    default:
      return null;
  }
}
