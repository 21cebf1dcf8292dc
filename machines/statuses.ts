// The payment's statuses (spec §3, plus `canceled`) and the tags the machine gives them: the
// machine (./payment.ts) takes each state's tags from this table, so any list of statuses is
// derived from the one the machine is built with (test/machines/definition.test.ts holds them
// equal). Plain data, without XState: the console and the typed client, which run in a browser,
// derive their lists from it too.

/** What a status says beyond its name: who the payment waits for. */
export type StatusTag = "awaiting_processor" | "collecting_card";

export const STATUS_TAGS = {
  requires_payment_method: [],
  // the terminal or reader is collecting: its outcome is reported by the processor
  payment_method_requested: ["awaiting_processor", "collecting_card"],
  requires_capture: [],
  // the capture settles when the processor confirms it
  capture_requested: ["awaiting_processor"],
  succeeded: [],
  error: [],
  canceled: [],
} as const satisfies Record<string, readonly StatusTag[]>;

export type PaymentStatus = keyof typeof STATUS_TAGS;

/** Every status, in the machine's order. */
export const PAYMENT_STATUSES = Object.keys(STATUS_TAGS) as PaymentStatus[];

/** The statuses the machine tags so. */
export const statusesTagged = (tag: StatusTag): PaymentStatus[] => PAYMENT_STATUSES.filter((s) => (STATUS_TAGS[s] as readonly StatusTag[]).includes(tag));
