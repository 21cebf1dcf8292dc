// `cardflow/client`: a typed client of the HTTP API, one method per endpoint. Requests are typed
// by the same zod schemas the service validates with (src/inputs.ts, src/http/routes/*), answers
// by the schemas that generate the OpenAPI document (src/http/schemas.ts); only types are
// imported, so the client runs in node and in a browser (its one dependency, eventsource-parser,
// reads server-sent events). Retries, the Idempotency-Key and errors: ./transport.ts; the event
// stream: ./events.ts; polling a payment: ./wait.ts (spec §8).
import type { z } from "zod";
import type { PaymentStatus } from "../../machines/payment.js";
import type { PaymentRecord } from "../present/payment-record.js";
import type { AccountOut } from "../http/routes/account.js";
import type { ListCustomerCardsInput } from "../http/routes/customer-cards.js";
import type { ListTerminalsInput } from "../http/routes/hardware.js";
import type {
  ListPaymentsInput,
  PaymentAsOfInput,
  PaymentAsOfOut,
  PaymentAuditInput,
  PaymentAuditOut,
  PaymentDiagramInput,
  PaymentDiagramOut,
} from "../http/routes/payment-history.js";
import type { ApiKeyOut } from "../http/routes/api-keys.js";
import type { EventPageOut, ListEventsInput, PublicEventOut } from "../http/routes/events.js";
import type { ClerkCancelInput, PresentCardInput } from "../http/routes/simulator.js";
import type { CreatedWebhookEndpointOut, RetriedDeliveryOut, WebhookDeliveryOut, WebhookEndpointOut } from "../http/routes/webhook-endpoints.js";
import type { CreateEndpointInput, EndpointRef } from "../webhooks/endpoints.js";
import type { ListDeliveriesInput } from "../webhooks/index.js";
import type { ClientIntentOut, CreatedIntentOut, CustomerCardOut, TerminalOut } from "../http/schemas.js";
import type {
  AuthorizeInput,
  CancelInput,
  CaptureInput,
  CollectPaymentMethodInput,
  CreateIntentInput,
  GetPaymentInput,
  ProcessPaymentInput,
  RefundInput,
  RegisterTerminalInput,
  SaveCardInput,
} from "../inputs.js";
import { streamEvents, type StreamItem, type StreamOptions, type StreamQuery } from "./events.js";
import { createTransport, type CallOptions, type ClientOptions } from "./transport.js";
import { waitForPayment, type WaitQuery } from "./wait.js";

import { ApiError } from "./errors.js";
export { ApiError, ConnectionError, WaitTimeout, type Problem } from "./errors.js";
export type { CallOptions, ClientOptions } from "./transport.js";

type In<S extends z.ZodType> = z.input<S>;
type Out<S extends z.ZodType> = z.output<S>;

/** The payment record of spec §2.1 as /v2 writes it (final success status `succeeded`). */
export type Payment = PaymentRecord;
export type { PaymentStatus };
export type CreatedIntent = Omit<Out<ReturnType<typeof CreatedIntentOut>>, "status"> & { status: PaymentStatus };
export type Terminal = Out<typeof TerminalOut>;
export type CustomerCard = Out<typeof CustomerCardOut>;
export type ClientIntent = Omit<Out<typeof ClientIntentOut>, "status"> & { status: PaymentStatus };
export type Account = Out<typeof AccountOut>;
export type PaymentList = { data: Payment[]; has_more: boolean; next_cursor: string | null };
export type PaymentAudit = Omit<Out<typeof PaymentAuditOut>, "record"> & { record: Payment | null };
export type PaymentDiagram = Out<typeof PaymentDiagramOut>;
export type PaymentAsOf = Omit<Out<typeof PaymentAsOfOut>, "record"> & { record: Payment | null };

export type PublicEvent = Out<typeof PublicEventOut>;
export type ApiKey = Out<typeof ApiKeyOut>;
export type EventPage = Out<typeof EventPageOut>;
export type WebhookEndpoint = Out<typeof WebhookEndpointOut>;
export type CreatedWebhookEndpoint = Out<typeof CreatedWebhookEndpointOut>;
export type WebhookDelivery = Out<typeof WebhookDeliveryOut>;
export type RetriedWebhookDelivery = Out<typeof RetriedDeliveryOut>;
export type { StreamItem, StreamOptions, StreamQuery, WaitQuery };

/**
 * saveCard goes through /v1 (spec §4.7 has no /v2 route), whose refusals write the succeeded state
 * `success` (spec §3): said in /v2's words, as every other call's refusal and the Payment type are.
 */
function inV2Words(error: unknown): never {
  if (error instanceof ApiError && error.current_status === "success") {
    throw new ApiError({ ...error.problem, current_status: "succeeded", detail: error.detail.replace(" in status success", " in status succeeded") });
  }
  throw error;
}

/**
 * Every method takes its parameters as one object, then, optionally, the call's own options
 * (`idempotencyKey` on a POST, `signal` to abort).
 */
export function createClient(options: ClientOptions) {
  const { send, open, backoff } = createTransport(options);
  const post = <T>(path: string, body: unknown, call?: CallOptions, auth = true) => send<T>({ method: "POST", path, body, auth }, call);
  const get = <T>(path: string, query: Record<string, string | number | undefined>, call?: CallOptions) => send<T>({ method: "GET", path, query }, call);
  const del = <T>(path: string, query: Record<string, string | number | undefined>, call?: CallOptions) => send<T>({ method: "DELETE", path, query }, call);
  const pathOf = (base: string, id: string, rest = "") => `${base}/${encodeURIComponent(id)}${rest}`;

  const client = {
    /** The merchant account of the API key (extension); ApiError 401 when the key is not valid. */
    account: (_params: Record<string, never> = {}, call?: CallOptions) => get<Account>("/v2/account", {}, call),
    // spec §4.1, §4.2
    registerTerminal: (body: In<typeof RegisterTerminalInput>, call?: CallOptions) => post<Terminal>("/v2/hardware", body, call),
    listTerminals: (query: In<typeof ListTerminalsInput>, call?: CallOptions) => get<{ data: Terminal[] }>("/v2/hardware", query, call),
    // spec §4.3–4.6
    createIntent: (body: In<typeof CreateIntentInput>, call?: CallOptions) => post<CreatedIntent>("/v2/payment/intent", body, call),
    authorize: (body: In<typeof AuthorizeInput>, call?: CallOptions) => post<Payment>("/v2/payment/auth", body, call),
    getPayment: ({ payment_id, ...query }: In<typeof GetPaymentInput>, call?: CallOptions) => get<Payment>(pathOf("/v2/payment/intent", payment_id), query, call),
    capture: (body: In<typeof CaptureInput>, call?: CallOptions) => post<Payment>("/v2/payment/capture", body, call),
    // extensions: cancel (void) and refunds
    cancel: (body: In<typeof CancelInput>, call?: CallOptions) => post<Payment>("/v2/payment/cancel", body, call),
    refund: (body: In<typeof RefundInput>, call?: CallOptions) => post<Payment>("/v2/payment/refund", body, call),
    // spec §4.7 and the list extension
    saveCard: (body: In<typeof SaveCardInput>, call?: CallOptions) => post<CustomerCard>("/v1/customer/card", body, call).catch(inV2Words),
    listCustomerCards: (query: In<typeof ListCustomerCardsInput>, call?: CallOptions) => get<{ data: CustomerCard[] }>("/v1/customer/card", query, call),
    // extensions for consoles and audits (src/http/routes/payment-history.ts)
    listPayments: (query: Omit<In<typeof ListPaymentsInput>, "limit"> & { limit?: number }, call?: CallOptions) => get<PaymentList>("/v2/payments", query, call),
    auditPayment: ({ payment_id, ...query }: In<typeof PaymentAuditInput>, call?: CallOptions) => get<PaymentAudit>(pathOf("/v2/payment/intent", payment_id, "/audit"), query, call),
    paymentDiagram: ({ payment_id, ...query }: In<typeof PaymentDiagramInput>, call?: CallOptions) => get<PaymentDiagram>(pathOf("/v2/payment/intent", payment_id, "/diagram"), query, call),
    paymentAsOf: ({ payment_id, ...query }: In<typeof PaymentAsOfInput>, call?: CallOptions) => get<PaymentAsOf>(pathOf("/v2/payment/intent", payment_id, "/as-of"), query, call),
    // the event feed and webhook endpoints (README: Webhooks and the event feed)
    /** One page of the account's public events, oldest first; pass `next_cursor` as `after` for the next. */
    listEvents: (query: Omit<In<typeof ListEventsInput>, "limit"> & { limit?: number }, call?: CallOptions) => get<EventPage>("/v2/events", query, call),
    /** Every public event after `after` (absent: from now on), as it happens; reconnects by itself. Ends only by `signal`. */
    streamEvents: (query: StreamQuery, call?: StreamOptions) => streamEvents<PublicEvent>(open, backoff, query, call),
    createWebhookEndpoint: (body: In<typeof CreateEndpointInput>, call?: CallOptions) => post<CreatedWebhookEndpoint>("/v2/webhook_endpoints", body, call),
    listWebhookEndpoints: (query: { external_account_id: string }, call?: CallOptions) => get<{ data: WebhookEndpoint[] }>("/v2/webhook_endpoints", query, call),
    deleteWebhookEndpoint: ({ endpoint_id, ...query }: In<typeof EndpointRef>, call?: CallOptions) => del<WebhookEndpoint>(pathOf("/v2/webhook_endpoints", endpoint_id), query, call),
    /** A page of the endpoint's deliveries, newest first: a row per event posted (attempts, last answer, next attempt). */
    listWebhookDeliveries: ({ endpoint_id, ...query }: Omit<In<typeof ListDeliveriesInput>, "limit"> & { limit?: number }, call?: CallOptions) => get<{ data: WebhookDelivery[]; has_more: boolean }>(pathOf("/v2/webhook_endpoints", endpoint_id, "/deliveries"), query, call),
    /** Posts a delivery again now; a failing endpoint is enabled again by it (`endpoint_reenabled`). */
    retryWebhookDelivery: ({ endpoint_id, event_id, ...body }: { external_account_id: string; endpoint_id: string; event_id: string }, call?: CallOptions) =>
      post<RetriedWebhookDelivery>(pathOf("/v2/webhook_endpoints", endpoint_id, `/deliveries/${encodeURIComponent(event_id)}/retry`), body, call),
    // the account's API keys (never a key itself): list, revoke
    listApiKeys: (query: { external_account_id: string }, call?: CallOptions) => get<{ data: ApiKey[] }>("/v2/api_keys", query, call),
    revokeApiKey: ({ key_id, ...query }: { external_account_id: string; key_id: string }, call?: CallOptions) => del<ApiKey>(pathOf("/v2/api_keys", key_id), query, call),
    /** The processor B client SDK's calls: authorised by the intent's client secret, no API key. */
    sdk: {
      collectPaymentMethod: (body: In<typeof CollectPaymentMethodInput>, call?: CallOptions) => post<ClientIntent>("/v2/sdk/payment-method", body, call, false),
      processPayment: (body: In<typeof ProcessPaymentInput>, call?: CallOptions) => post<ClientIntent>("/v2/sdk/process-payment", body, call, false),
    },
    /** The sandbox's simulated terminal (served by `npm start`). */
    sandbox: {
      presentCard: (body: In<typeof PresentCardInput>, call?: CallOptions) => post<Payment>("/sim/terminal/present-card", body, call),
      clerkCancel: (body: In<typeof ClerkCancelInput>, call?: CallOptions) => post<Payment>("/sim/terminal/clerk-cancel", body, call),
    },
    health: (_params: Record<string, never> = {}, call?: CallOptions) => get<{ status: "ok" }>("/healthz", {}, call),

    /**
     * Polls the status read (spec §4.5) until the payment has a status of `until`, as spec §8
     * advises after an asynchronous terminal auth (./wait.ts). Network errors and 503 are retried by each read.
     */
    waitForPayment: (query: WaitQuery, call?: Pick<CallOptions, "signal">) => waitForPayment((q, c) => client.getPayment(q, c), query, call),
  };
  return client;
}

export type Client = ReturnType<typeof createClient>;
