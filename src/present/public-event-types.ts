// The public event types a merchant can be told of (webhooks, the event feed): plain data, without
// the domain's modules, so the web console, which runs in a browser, offers the same list.
export const PUBLIC_EVENT_TYPES = [
  "payment_intent.created",
  "payment_intent.payment_method_requested",
  "payment_intent.requires_capture",
  "payment_intent.capture_requested",
  "payment_intent.succeeded",
  "payment_intent.payment_failed",
  "payment_intent.canceled",
  "payment_intent.refunded",
  "customer_card.saved",
  "terminal.registered",
] as const;
export type PublicEventType = (typeof PUBLIC_EVENT_TYPES)[number];
