// The domain events of cardflow: facts in past tense, one zod schema each, with a schema version.
// The payment machine's events are exactly the PaymentEvent union below; the store keeps them in
// an envelope (id, metadata, stream revision, global position: src/store/port.ts).
import { z } from "zod";
import { LAST_ERROR_CODES } from "./failures.js";

/** A decimal amount written with the currency's minor units, e.g. "10.00" (USD), "500" (JPY). */
export const AmountString = z.string().regex(/^\d+(\.\d+)?$/, "a non-negative decimal string");

export const Processor = z.enum(["A", "B"]);
export type Processor = z.infer<typeof Processor>;

/** Spec §1: processor A's asynchronous and synchronous terminals, processor B's reader (client SDK). */
export const TerminalType = z.enum(["A_async", "A_sync", "B_reader"]);
export type TerminalType = z.infer<typeof TerminalType>;

export const PaymentMethodType = z.enum(["card_present", "card"]);
export const CaptureMethod = z.enum(["automatic", "manual"]);

/** The card as the processor reports it (the `payment` object of spec §2.1, less derived fields). */
export const Card = z.object({
  type: z.enum(["card_present", "card_not_present"]),
  brand: z.string(),
  last_4: z.string().regex(/^\d{4}$/),
  exp_month: z.string().regex(/^(0[1-9]|1[0-2])$/),
  exp_year: z.number().int().min(2000).max(2200),
  cardholder_name: z.string().nullable(),
  funding: z.enum(["credit", "debit", "prepaid", "unknown"]).default("unknown"),
});
export type Card = z.infer<typeof Card>;

/** What a processor reports when it authorizes: also carried by a capture that authorizes at once. */
export const Authorization = z.object({
  amount_authorized: AmountString,
  tip_amount: AmountString,
  donation_amount: AmountString,
  authorization_code: z.string(),
  card: Card,
  avs_response_code: z.number().int().nullable(),
  avs_response_message: z.string().nullable(),
});
export type Authorization = z.infer<typeof Authorization>;

/**
 * An event's schema at its current version. Changing an event's data means a new version here and,
 * in ./event-versions.ts, the previous schema kept with an upcaster from it (stored events are never
 * rewritten; test/machines/event-versions.test.ts holds every schema's fingerprint).
 */
export const eventSchema = <T extends string, D extends z.ZodType, V extends number = 1>(type: T, data: D, version: V = 1 as V) =>
  z.object({ type: z.literal(type), version: z.literal(version), data });
const event = eventSchema;

/**
 * The attempt an outcome answers (the processor idempotency key of the call). Absent in streams
 * written before attempts were recorded, and in what a processor reports on its own (a terminal's
 * outcome, a settlement): the machine accepts those only while no attempt is in flight.
 */
const answers = { attempt_id: z.string().optional() };

// --- payment stream: `payment-<payment_id>` -------------------------------------------------

const PaymentIntentCreatedFields = {
  payment_id: z.string(),
  external_account_id: z.string(),
  amount: AmountString,
  currency: z.string().regex(/^[A-Z]{3}$/),
  payment_method_types: PaymentMethodType,
  capture_method: CaptureMethod,
  /** The account's processor; a card-present intent's terminal or reader may name another. */
  processor: Processor,
  external_transaction_id: z.union([z.string(), z.number()]).nullable(),
  external_customer_id: z.string().nullable(),
  /** The card on file charged by a stored-card intent (spec §4.8 "Stored-card charge"). */
  payment_method_id: z.string().nullable(),
  stored_card: Card.nullable(),
};
const PaymentIntentCreatedEnd = {
  /**
   * Lets the processor B client SDK collect a card for this intent (spec §4.8). Only its SHA-256
   * is recorded (client_secret_sha256; the secret is shown once); streams written before that
   * hold the secret itself here, and null in client_secret_sha256's place.
   */
  client_secret: z.string().nullable(),
  client_secret_sha256: z.string().regex(/^[0-9a-f]{64}$/).nullable().optional(),
  date_created: z.string(),
};

/** v1: allow_saving_card false whether the caller sent false or nothing. */
export const PaymentIntentCreatedData1 = z.object({ ...PaymentIntentCreatedFields, allow_saving_card: z.boolean(), ...PaymentIntentCreatedEnd });

/**
 * v2: allow_saving_card as the caller sent it, null when not sent. Spec §4.3: saving needs it true;
 * a customer on the intent lets its card be saved too (spec §4.8's flow with the customer on the
 * intent sends none), unless the caller said false (the shopper declined).
 */
export const PaymentIntentCreated = event("PaymentIntentCreated", z.object({ ...PaymentIntentCreatedFields, allow_saving_card: z.boolean().nullable(), ...PaymentIntentCreatedEnd }), 2);

export const TransactionReferenceGivenData1 = z.object({ external_transaction_id: PaymentIntentCreated.shape.data.shape.external_transaction_id.unwrap() });

/**
 * Spec §4.4: the caller's reference for the transaction (external_payment_id), given with an
 * authorization: the payment's external_transaction_id from then on, in place of the one given at
 * creation (a point of sale numbers each try). v2: the reference may be none (null), for the one
 * a refused attempt's reference gives back (the payment had none before it).
 */
export const TransactionReferenceGiven = event("TransactionReferenceGiven", z.object({ external_transaction_id: PaymentIntentCreated.shape.data.shape.external_transaction_id }), 2);

/** An authorization was started on a processor A terminal; the terminal now asks for the card. */
export const TerminalAuthorizationStarted = event(
  "TerminalAuthorizationStarted",
  z.object({ terminal_id: z.string(), terminal_type: TerminalType, ...answers }),
);

/**
 * Processor B: the client SDK collected a card for the intent with its client secret (spec §4.8),
 * on a registered reader (card present) or from a card form (card not present, terminal_id null).
 */
export const PaymentMethodCollected = event(
  "PaymentMethodCollected",
  z.object({ card: Card, terminal_id: z.string().nullable() }),
);

export const PaymentAuthorized = event("PaymentAuthorized", Authorization.extend(answers));

export const AuthorizationFailed = event(
  "AuthorizationFailed",
  z.object({ last_error: z.string(), last_error_code: z.enum(LAST_ERROR_CODES).nullable(), ...answers }),
);

/** `authorization` is set when the processor authorized and captured in one step (spec §3). */
export const CaptureRequested = event(
  "CaptureRequested",
  z.object({ amount: AmountString, authorization: Authorization.nullable(), ...answers }),
);
export const PaymentCaptured = event(
  "PaymentCaptured",
  z.object({ amount: AmountString, authorization: Authorization.nullable(), ...answers }),
);

/** Extension: void before capture. */
export const PaymentCanceled = event(
  "PaymentCanceled",
  z.object({ cancellation_reason: z.enum(["requested_by_customer", "duplicate", "fraudulent", "abandoned"]).nullable(), ...answers }),
);

/** Extension: a full or partial refund; the status stays succeeded. */
export const PaymentRefunded = event(
  "PaymentRefunded",
  z.object({ refund_id: z.string(), amount: AmountString, reason: z.string().nullable(), ...answers }),
);

/** The card of this payment was saved on file for a customer (spec §2.3, §4.7). */
export const CardSaved = event(
  "CardSaved",
  z.object({ payment_method_id: z.string(), external_account_id: z.string(), external_customer_id: z.string(), card: Card, ...answers }),
);

// --- attempts: appended before a processor call that moves money or changes a card ----------
// The attempt id is the call's idempotency key; the outcome event names it. An attempt without an
// outcome is an unknown outcome: the reconciler (src/engine/reconcile.ts) asks the processor.

/** A stored-card charge or the authorization of a card the client SDK collected. */
export const AuthorizationAttempted = event("AuthorizationAttempted", z.object({ attempt_id: z.string(), amount: AmountString }));
/** A processor A terminal is asked to start collecting. */
export const TerminalAuthorizationAttempted = event(
  "TerminalAuthorizationAttempted",
  z.object({ attempt_id: z.string(), terminal_id: z.string(), terminal_type: TerminalType }),
);
export const CaptureAttempted = event("CaptureAttempted", z.object({ attempt_id: z.string(), amount: AmountString }));
/** Releasing an authorization (cancel after authorization). */
export const VoidAttempted = event("VoidAttempted", z.object({ attempt_id: z.string(), cancellation_reason: PaymentCanceled.shape.data.shape.cancellation_reason }));
export const RefundAttempted = event("RefundAttempted", z.object({ attempt_id: z.string(), amount: AmountString, reason: z.string().nullable() }));
export const CardSaveAttempted = event("CardSaveAttempted", z.object({ attempt_id: z.string(), external_customer_id: z.string() }));
/**
 * The processor did nothing for the attempt: it never received the call, or refused it before
 * acting (a busy terminal, a card that cannot be saved). The command may be tried again.
 */
export const AttemptAbandoned = event("AttemptAbandoned", z.object({ attempt_id: z.string(), reason: z.string() }));

/** Each attempt's outcome events (besides AttemptAbandoned). */
export const OUTCOMES = {
  AuthorizationAttempted: ["PaymentAuthorized", "CaptureRequested", "PaymentCaptured", "AuthorizationFailed"],
  TerminalAuthorizationAttempted: ["TerminalAuthorizationStarted"],
  CaptureAttempted: ["CaptureRequested", "PaymentCaptured"],
  VoidAttempted: ["PaymentCanceled"],
  RefundAttempted: ["PaymentRefunded"],
  CardSaveAttempted: ["CardSaved"],
} as const;
export type AttemptType = keyof typeof OUTCOMES;
export const ATTEMPT_TYPES = Object.keys(OUTCOMES) as AttemptType[];
const ATTEMPTS = new Set<string>(ATTEMPT_TYPES);
export const isAttempt = (event: { type: string }): event is AttemptEvent => ATTEMPTS.has(event.type);

/**
 * What an event means for an attempt (the machine's guards and a retry's answer both ask this):
 * "answered", its outcome (the processor acted, and this is what it did); "abandoned", the
 * processor did nothing (the command may be tried again); null, it does not close that attempt.
 */
export function closesAttempt(attempt: AttemptEvent, event: { type: string; data: unknown }): "answered" | "abandoned" | null {
  if ((event.data as { attempt_id?: string }).attempt_id !== attempt.data.attempt_id) return null;
  if (event.type === "AttemptAbandoned") return "abandoned";
  return (OUTCOMES[attempt.type] as readonly string[]).includes(event.type) ? "answered" : null;
}

export const PaymentEvent = z.discriminatedUnion("type", [
  PaymentIntentCreated,
  TransactionReferenceGiven,
  TerminalAuthorizationStarted,
  PaymentMethodCollected,
  PaymentAuthorized,
  AuthorizationFailed,
  CaptureRequested,
  PaymentCaptured,
  PaymentCanceled,
  PaymentRefunded,
  CardSaved,
  AuthorizationAttempted,
  TerminalAuthorizationAttempted,
  CaptureAttempted,
  VoidAttempted,
  RefundAttempted,
  CardSaveAttempted,
  AttemptAbandoned,
]);
export type PaymentEvent = z.infer<typeof PaymentEvent>;
export type PaymentEventType = PaymentEvent["type"];
export type PaymentEventOf<T extends PaymentEventType> = Extract<PaymentEvent, { type: T }>;
export type AttemptEvent = PaymentEventOf<AttemptType>;

// --- late answers a payment did not take: `late_answers-<payment_id>` --------------------------

/**
 * The processor acted on a call after its attempt was abandoned as never received (its late
 * answer), and the payment could no longer take what it did: another call moved it meanwhile (the
 * whole amount refunded through another process, say). Money moved at the processor that the
 * payment's stream does not show, recorded once per attempt for an operator to settle with the
 * processor (`cardflow audit` reports it). Not a payment event: the machine never sees it.
 */
export const LateAnswerUnapplied = event(
  "LateAnswerUnapplied",
  z.object({
    payment_id: z.string(),
    attempt_id: z.string(),
    attempt_type: z.enum(ATTEMPT_TYPES as [AttemptType, ...AttemptType[]]),
    /** The outcome events the answer would have appended: what the processor did (its ids, amounts). */
    answer: z.array(z.object({ type: z.string(), data: z.record(z.string(), z.unknown()) })),
    /** Why the payment did not take them (the machine's refusal). */
    reason: z.string(),
  }),
);
export type UnappliedData = z.infer<typeof LateAnswerUnapplied>["data"];

/** An operator settled an unapplied late answer with the processor (refunded the money again, say): the audit no longer reports it. */
export const LateAnswerSettled = event(
  "LateAnswerSettled",
  z.object({ payment_id: z.string(), attempt_id: z.string(), /** What the operator did, in their words. */ note: z.string().min(1) }),
);

// --- account and terminal streams --------------------------------------------------------------

/** A merchant account: which processor serves its card-not-present payments, and its currency. */
export const AccountOpened = event(
  "AccountOpened",
  z.object({ external_account_id: z.string(), processor: Processor, currency: z.string().regex(/^[A-Z]{3}$/) }),
);

export const TerminalRegistered = event(
  "TerminalRegistered",
  z.object({
    terminal_id: z.string(),
    external_account_id: z.string(),
    terminal_type: TerminalType,
    label: z.string().nullable(),
    serial_number: z.string().nullable(),
    registered_at: z.string(),
  }),
);

/** ApiKeyIssued as release v0.1.0 wrote it (machines/event-versions.ts upcasts it to version 2). */
export const ApiKeyIssuedData1 = z.object({ key_id: z.string(), external_account_id: z.string(), key_sha256: z.string().regex(/^[0-9a-f]{64}$/), issued_at: z.string() });

/**
 * An API key was issued for a merchant account (HTTP authentication). Only the key's SHA-256 is
 * recorded: keys are random tokens of about 190 bits, so a fast hash is enough (there is no
 * dictionary to try) and lets a request find its key by hash. The key is shown once, when issued;
 * `prefix` (its first characters) lets an operator recognise it in a list. Version 2 added
 * `prefix` and `expires_at` (null: no expiry; v1 events read as null for both).
 */
export const ApiKeyIssued = event("ApiKeyIssued", ApiKeyIssuedData1.extend({ prefix: z.string().nullable(), expires_at: z.string().nullable() }), 2);

/** An API key stopped working: every request with it is 401 from then on. */
export const ApiKeyRevoked = event("ApiKeyRevoked", z.object({ key_id: z.string(), external_account_id: z.string(), revoked_at: z.string() }));

/** An API key was replaced by a new one (`replaced_by`); it keeps working until `grace_until`, then no more. */
export const ApiKeyRotated = event(
  "ApiKeyRotated",
  z.object({ key_id: z.string(), external_account_id: z.string(), replaced_by: z.string(), rotated_at: z.string(), grace_until: z.string() }),
);

export const DomainEvent = z.discriminatedUnion("type", [...PaymentEvent.options, LateAnswerUnapplied, LateAnswerSettled, AccountOpened, TerminalRegistered, ApiKeyIssued, ApiKeyRevoked, ApiKeyRotated]);
export type DomainEvent = z.infer<typeof DomainEvent>;

export const streams = {
  payment: (paymentId: string) => `payment-${paymentId}`,
  /** A payment's late answers it did not take (LateAnswerUnapplied), and their settling (LateAnswerSettled), beside its own stream. */
  lateAnswers: (paymentId: string) => `late_answers-${paymentId}`,
  account: (accountId: string) => `account-${accountId}`,
  terminal: (terminalId: string) => `terminal-${terminalId}`,
  /** One stream per API key, named by the key's SHA-256: authentication is one stream read. */
  apiKey: (keySha256: string) => `apikey-${keySha256}`,
} as const;

// --- webhook endpoints: `webhook_endpoint-<endpoint_id>`, `webhook_deliveries-<endpoint_id>` -----

/**
 * A merchant registered a URL to receive its public events (src/webhooks/). The signing secret is
 * not recorded: it is derived from the service's signing key and the endpoint id, so an export of
 * the event log reveals no secret; `signing_key_id` names the key it was derived from.
 */
export const WebhookEndpointCreated = event(
  "WebhookEndpointCreated",
  z.object({
    endpoint_id: z.string(),
    external_account_id: z.string(),
    url: z.string(),
    /** null: every public event type. */
    event_types: z.array(z.string()).nullable(),
    signing_key_id: z.string(),
    created_at: z.string(),
  }),
);

export const WebhookEndpointDeleted = event("WebhookEndpointDeleted", z.object({ endpoint_id: z.string(), deleted_at: z.string() }));

/** Deliveries kept failing past the retry horizon: the endpoint gets nothing more (the feed still has every event). */
export const WebhookEndpointFailing = event(
  "WebhookEndpointFailing",
  z.object({ endpoint_id: z.string(), event_id: z.string(), since: z.string(), last_error: z.string() }),
);

/** A failing endpoint enabled again (a delivery retried through the API): delivery resumes with a fresh retry horizon. */
export const WebhookEndpointEnabled = event("WebhookEndpointEnabled", z.object({ endpoint_id: z.string(), event_id: z.string(), enabled_at: z.string() }));

/** One attempt to deliver a public event to an endpoint: acknowledged with a 2xx, or not (and when it is tried again). */
export const WebhookDeliveryAttempted = event(
  "WebhookDeliveryAttempted",
  z.object({
    endpoint_id: z.string(),
    event_id: z.string(),
    event_type: z.string(),
    payment_id: z.string().nullable(),
    sequence: z.number().int(),
    attempt: z.number().int().positive(),
    delivered: z.boolean(),
    status_code: z.number().int().nullable(),
    error: z.string().nullable(),
    duration_ms: z.number(),
    next_attempt_at: z.string().nullable(),
  }),
);

export const WebhookEvent = z.discriminatedUnion("type", [WebhookEndpointCreated, WebhookEndpointDeleted, WebhookEndpointFailing, WebhookEndpointEnabled, WebhookDeliveryAttempted]);
export type WebhookEvent = z.infer<typeof WebhookEvent>;

export const webhookStreams = {
  endpoint: (endpointId: string) => `webhook_endpoint-${endpointId}`,
  /** Every delivery attempt to one endpoint (the audit timeline of a payment shows its own). */
  deliveries: (endpointId: string) => `webhook_deliveries-${endpointId}`,
} as const;
