// The read models cardflow runs, in one place: the engine's runner, the audit (which refolds them
// to compare) and the CLI take this list, so a read model is added or retired here only.
import { apiKeysProjection } from "./api-keys.js";
import { customerCardsProjection } from "./customer-cards.js";
import { paymentDeliveriesProjection } from "./payment-deliveries.js";
import { paymentsProjection } from "./payments.js";
import type { Projection } from "./projection.js";
import { terminalsProjection } from "./terminals.js";

export const PROJECTIONS: readonly Projection<any>[] = [paymentsProjection, terminalsProjection, customerCardsProjection, paymentDeliveriesProjection, apiKeysProjection];

/**
 * Read models of earlier releases, their documents and checkpoints dropped by the engine's first
 * catch-up (their tables stay, emptied: a process of the earlier release still running during a
 * rolling upgrade folds them again from zero, and only it reads them): `timeline` copied every
 * payment's stream (its history is the stream: src/audit/audit.ts) beside the deliveries that
 * `payment_deliveries` now holds; `payments` held each record beside its state; `payment_states`
 * and `customer_cards` (documents, then tables with other indexes), which `payment_states_v3` and
 * `customer_cards_v3` replaced; `payment_states_v3` (its reference fixed at creation), which
 * `payment_states_v4` replaces; the webhook feed's `public_events` (each public event three times,
 * as documents), `public_event_streams` and `webhook_endpoints`, which `feed_entries` (a table),
 * `feed_streams` and `feed_endpoints` replace (src/webhooks/feed.ts FEED).
 */
export const RETIRED_PROJECTIONS: readonly string[] = ["timeline", "payments", "payment_states", "payment_states_v3", "customer_cards", "public_events", "public_event_streams", "webhook_endpoints"];
