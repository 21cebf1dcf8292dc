// A realistic mix of payment flows as stored events, for the replay benchmark: stored-card
// charges, terminal and reader collections, retries after failures, cancels, refunds and cards
// saved, interleaved the way concurrent traffic lands in the store (64 payments in flight).
// Deterministic (seeded), so every run folds the same events.
import type { Authorization, Card, PaymentEvent, PaymentEventOf } from "../../machines/events.js";

export interface MixEvent {
  stream: string;
  revision: number;
  type: PaymentEvent["type"];
  version: 1;
  data: PaymentEvent["data"];
}

type Intent = PaymentEventOf<"PaymentIntentCreated">["data"];
type Step = Omit<PaymentEvent, "version"> & { version?: 1 };

const card = (type: Card["type"], brand = "visa", last_4 = "4242"): Card => ({
  type,
  brand,
  last_4,
  exp_month: "12",
  exp_year: 2031,
  cardholder_name: "TEST CARDHOLDER",
  funding: "credit",
});
const CARDS = { present: card("card_present"), online: card("card_not_present"), mastercard: card("card_not_present", "mastercard", "4444") };

/** A seeded xorshift: the mix is the same on every run and every machine. */
function random(seed: number) {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

/** An amount split in two parts that add up to it exactly (in cents). */
function halves(amount: string): [string, string] {
  const cents = Math.round(Number(amount) * 100);
  const first = Math.floor(cents / 2);
  return [(first / 100).toFixed(2), ((cents - first) / 100).toFixed(2)];
}

const AMOUNTS = ["4.50", "12.00", "19.99", "25.00", "60.00", "120.00", "999.99"];

function authorization(amount: string, c: Card, tip = "0.00"): Authorization {
  const total = (Number(amount) + Number(tip)).toFixed(2);
  return { amount_authorized: total, tip_amount: tip, donation_amount: "0.00", authorization_code: "A1B2C3", card: c, avs_response_code: 0, avs_response_message: "Address and postal code match" };
}

/** The flows, weighted by how often they occur; each returns the events of one payment. */
const FLOWS: { weight: number; events: (intent: Intent, rnd: () => number) => Step[] }[] = [
  // stored card, automatic capture: charged and captured in one processor step
  { weight: 22, events: (i) => [{ type: "PaymentCaptured", data: { amount: i.amount, authorization: authorization(i.amount, CARDS.online) } }] },
  // stored card, manual capture, captured in full or in part later
  {
    weight: 14,
    events: (i, rnd) => [
      { type: "PaymentAuthorized", data: authorization(i.amount, CARDS.mastercard) },
      { type: "PaymentCaptured", data: { amount: rnd() < 0.8 ? i.amount : halves(i.amount)[0], authorization: null } },
    ],
  },
  // processor A synchronous terminal, automatic: the terminal collects and captures, with a tip
  {
    weight: 16,
    events: (i) => [
      { type: "TerminalAuthorizationStarted", data: { terminal_id: "tmr_sync", terminal_type: "A_sync" } },
      { type: "PaymentCaptured", data: { amount: authorization(i.amount, CARDS.present, "2.00").amount_authorized, authorization: authorization(i.amount, CARDS.present, "2.00") } },
    ],
  },
  // processor A asynchronous terminal, manual: authorized, capture requested, settled
  {
    weight: 9,
    events: (i) => [
      { type: "TerminalAuthorizationStarted", data: { terminal_id: "tmr_async", terminal_type: "A_async" } },
      { type: "PaymentAuthorized", data: authorization(i.amount, CARDS.present) },
      { type: "CaptureRequested", data: { amount: i.amount, authorization: null } },
      { type: "PaymentCaptured", data: { amount: i.amount, authorization: null } },
    ],
  },
  // processor B reader, automatic: collected, authorized, captured by the engine
  {
    weight: 10,
    events: (i) => [
      { type: "PaymentMethodCollected", data: { card: CARDS.present, terminal_id: "tmr_reader" } },
      { type: "PaymentAuthorized", data: authorization(i.amount, CARDS.present) },
      { type: "PaymentCaptured", data: { amount: i.amount, authorization: null } },
    ],
  },
  // processor B client SDK card form, manual, card saved for the customer before capture
  {
    weight: 5,
    events: (i) => [
      { type: "PaymentMethodCollected", data: { card: CARDS.online, terminal_id: null } },
      { type: "PaymentAuthorized", data: authorization(i.amount, CARDS.online) },
      { type: "CardSaved", data: { payment_method_id: `pm_${i.payment_id}`, external_account_id: i.external_account_id, external_customer_id: "cus_1", card: CARDS.online } },
      { type: "PaymentCaptured", data: { amount: i.amount, authorization: null } },
    ],
  },
  // shopper cancels on the terminal, retried and captured
  {
    weight: 8,
    events: (i) => [
      { type: "TerminalAuthorizationStarted", data: { terminal_id: "tmr_sync", terminal_type: "A_sync" } },
      { type: "AuthorizationFailed", data: { last_error: "Canceled by shopper", last_error_code: "USER_CANCEL" } },
      { type: "TerminalAuthorizationStarted", data: { terminal_id: "tmr_sync", terminal_type: "A_sync" } },
      { type: "PaymentCaptured", data: { amount: i.amount, authorization: authorization(i.amount, CARDS.present) } },
    ],
  },
  // stored card declined, then charged again
  {
    weight: 5,
    events: (i) => [
      { type: "AuthorizationFailed", data: { last_error: "The processor declined the card", last_error_code: "ONLINE_DECLINED" } },
      { type: "PaymentCaptured", data: { amount: i.amount, authorization: authorization(i.amount, CARDS.online) } },
    ],
  },
  // abandoned on the terminal; authorized then voided
  { weight: 4, events: () => [{ type: "TerminalAuthorizationStarted", data: { terminal_id: "tmr_async", terminal_type: "A_async" } }, { type: "PaymentCanceled", data: { cancellation_reason: "abandoned" } }] },
  { weight: 3, events: (i) => [{ type: "PaymentAuthorized", data: authorization(i.amount, CARDS.mastercard) }, { type: "PaymentCanceled", data: { cancellation_reason: "requested_by_customer" } }] },
  // captured, then refunded in one or two parts
  {
    weight: 4,
    events: (i, rnd) => {
      const [first, second] = halves(i.amount);
      const refunds: Step[] = rnd() < 0.5 ? [{ type: "PaymentRefunded", data: { refund_id: `re_${i.payment_id}`, amount: i.amount, reason: null } }] : [
        { type: "PaymentRefunded", data: { refund_id: `re1_${i.payment_id}`, amount: first, reason: "damaged" } },
        { type: "PaymentRefunded", data: { refund_id: `re2_${i.payment_id}`, amount: second, reason: null } },
      ];
      return [{ type: "PaymentCaptured", data: { amount: i.amount, authorization: authorization(i.amount, CARDS.online) } }, ...refunds];
    },
  },
];

/** The intent each flow starts from (who collects the card and how it is captured). */
const INTENT_OF: Pick<Intent, "payment_method_types" | "capture_method" | "processor" | "allow_saving_card">[] = [
  { payment_method_types: "card", capture_method: "automatic", processor: "A", allow_saving_card: false },
  { payment_method_types: "card", capture_method: "manual", processor: "B", allow_saving_card: false },
  { payment_method_types: "card_present", capture_method: "automatic", processor: "A", allow_saving_card: false },
  { payment_method_types: "card_present", capture_method: "manual", processor: "A", allow_saving_card: false },
  { payment_method_types: "card_present", capture_method: "automatic", processor: "B", allow_saving_card: false },
  { payment_method_types: "card", capture_method: "manual", processor: "B", allow_saving_card: true },
  { payment_method_types: "card_present", capture_method: "automatic", processor: "A", allow_saving_card: false },
  { payment_method_types: "card", capture_method: "automatic", processor: "A", allow_saving_card: false },
  { payment_method_types: "card_present", capture_method: "manual", processor: "A", allow_saving_card: false },
  { payment_method_types: "card", capture_method: "manual", processor: "A", allow_saving_card: false },
  { payment_method_types: "card", capture_method: "automatic", processor: "B", allow_saving_card: false },
];
const STORED = new Set([0, 1, 7, 9, 10]);

/** About `count` events (whole payments), in store order. */
export function flowMix(count: number, seed = 7): MixEvent[] {
  const rnd = random(seed);
  const total = FLOWS.reduce((s, f) => s + f.weight, 0);
  const pick = () => {
    let r = rnd() * total;
    for (const [i, f] of FLOWS.entries()) if ((r -= f.weight) < 0) return i;
    return FLOWS.length - 1;
  };
  const out: MixEvent[] = [];
  const inFlight: MixEvent[][] = [];
  let n = 0;
  const startPayment = () => {
    const flow = pick();
    const payment_id = `pi_${(n++).toString(36).padStart(8, "0")}`;
    const stored = STORED.has(flow);
    const intent: Intent = {
      payment_id,
      external_account_id: `acct_${n % 50}`,
      amount: AMOUNTS[Math.floor(rnd() * AMOUNTS.length)]!,
      currency: "USD",
      ...INTENT_OF[flow]!,
      external_transaction_id: rnd() < 0.5 ? null : `order-${n}`,
      external_customer_id: stored || INTENT_OF[flow]!.allow_saving_card ? "cus_1" : null,
      payment_method_id: stored ? "pm_card_visa" : null,
      stored_card: stored ? CARDS.online : null,
      client_secret: stored ? null : `${payment_id}_secret_x`,
      date_created: "2026-11-21T10:00:00.000+00:00",
    };
    const steps: Step[] = [{ type: "PaymentIntentCreated", data: intent }, ...FLOWS[flow]!.events(intent, rnd)];
    const stream = `payment-${payment_id}`;
    return steps.map((s, revision) => ({ stream, revision, type: s.type, version: 1, data: s.data }) as MixEvent);
  };
  while (out.length < count) {
    while (inFlight.length < 64) inFlight.push(startPayment());
    // one event of a random payment in flight: the store's interleaving of concurrent traffic
    const i = Math.floor(rnd() * inFlight.length);
    out.push(inFlight[i]!.shift()!);
    if (inFlight[i]!.length === 0) inFlight.splice(i, 1);
  }
  for (const rest of inFlight) if (rest[0]!.revision > 0) out.push(...rest);
  return out;
}
