// cardflow as a library: the engine, its ports and adapters, the machine and its events.
import type { FastifyInstance } from "fastify";
import { registerConsole } from "./console/routes.js";
import { createServer as createApiServer, type ServerOptions } from "./http/server.js";
export { createEngine, LateAnswerWaits, UnappliedLateAnswer, type Engine, type EngineOptions, type CommandContext, type Account, type CreatedIntent } from "./engine.js";
export { paymentMachine, PAYMENT_STATUSES, type PaymentContext, type PaymentStatus } from "../machines/payment.js";
export * as events from "../machines/events.js";
export { FAILURES, LAST_ERROR_CODES, failureLeadsTo, type LastErrorCode } from "../machines/failures.js";
export { applyPaymentEvent, foldStored, stateOf, type PaymentState, type PaymentSnapshot } from "../machines/fold.js";
export { replay, type ReplayStep, type ReplayReport } from "./audit/replay.js";
export * from "./errors.js";
export {
  createIdempotency,
  fingerprintOf,
  IdempotencyKeyInUse,
  IdempotencyKeyReused,
  type Idempotency,
  type IdempotencyOptions,
  type IdempotentRequest,
  type IdempotentContext,
  type Answer as IdempotentAnswer,
} from "./idempotency.js";
export { systemClock, manualClock, isoTimestamp, type Clock, type ManualClock } from "./clock.js";
export { randomIds, sequentialIds, blockRequestIds, type Ids } from "./ids.js";
export { Decimal, parseAmount, formatAmount, minorUnits } from "./money.js";
export type * from "./store/port.js";
export { WrongExpectedRevision, IdempotencyClaimLost, StoreUnavailable } from "./store/port.js";
export { createMemoryReadModels, createMemoryStore } from "./store/memory/index.js";
// the durable stores `npm start` and the CLI compose (each returns its events and read models)
export { createSqliteStore, type SqliteStore, type SqliteStoreOptions } from "./store/sqlite/index.js";
// pg and @kurrent/kurrentdb-client are optional peer dependencies: loaded when such a store is opened
export { createKurrentStore, createPostgresStore, OptionalPackageMissing } from "./store/optional.js";
export type { PostgresStore, PostgresStoreOptions } from "./store/postgres/index.js";
export type { KurrentStoreOptions } from "./store/kurrentdb/index.js";
export { configFromEnv, openStores, outboundOf, ConfigurationError, type ServiceConfig, type OutboundConfig, type Stores } from "./config.js";
export type * from "./processors/port.js";
export { createSimulators, canBeSavedOnFile, type Simulators, type SimulatorOptions, type TerminalCapture } from "./processors/simulator.js";
export { fileSide, memorySide, processorSideIn, type ProcessorSide, type SideTable } from "./processors/processor-side.js";
// production: real processor adapters (PROCESSORS_MODULE) and the guarded outbound client they use
export { ROUTED_PROCESSORS } from "./processors/port.js";
export { loadAdapters, processorsFromAdapters, serviceProcessors, type AdapterContext, type ProcessorAdapters, type CreateProcessors } from "./processors/adapters.js";
export { createHttpProcessor, type HttpProcessorOptions } from "./processors/http-adapter.js";
export { createOutbound, OutboundRefused, OutboundFailed, type Outbound, type OutboundOptions, type OutboundRequest, type OutboundAnswer } from "./outbound/client.js";
export { judgeAddress, type AddressPolicy, type Verdict } from "./outbound/address-policy.js";
export { TEST_CARDS, TEST_AMOUNTS, TEST_PAYMENT_METHODS, cardFailingWith, amountFailingWith, testAmountIn } from "./processors/test-cards.js";
export { createReaderSdk, engineTransport, type ReaderSdk, type ReaderTransport, type ReaderCall, type CollectOptions } from "./client-sdk.js";
export { paymentRecord, type PaymentRecord } from "./present/payment-record.js";
// what a caller sends each command (the inputs' zod schemas, before parsing)
export type {
  OpenAccountRequest,
  RegisterTerminalRequest,
  CreateIntentRequest,
  AuthorizeRequest,
  CaptureRequest,
  CancelRequest,
  RefundRequest,
  SaveCardRequest,
  GetPaymentRequest,
  CollectPaymentMethodRequest,
  ProcessPaymentRequest,
} from "./inputs.js";
export type { TerminalRecord } from "../projections/terminals.js";
export type { CustomerCardRecord } from "../projections/customer-cards.js";
// the HTTP API as `npm start` serves it (fastify), and its API keys
export { apiRoutes, serviceOpenApi, type ServerOptions } from "./http/server.js";
/** The HTTP API and the web console on one fastify server, as `npm start` serves them. */
export const createServer = (options: ServerOptions): FastifyInstance => createApiServer({ ...options, extensions: [registerConsole, ...(options.extensions ?? [])] });
export { createApiKeys, type ApiKeys, type ApiKeyOwner } from "./api-keys.js";
export { createProgram as createCli } from "./cli/index.js";
export { createProjectionRunner, type ProjectionRunner } from "../projections/runner.js";
export { PROJECTIONS, RETIRED_PROJECTIONS } from "../projections/registry.js";
// audit and review tooling (src/audit)
export { canonicalJson } from "./events/canonical-json.js";
export { eventHash, headOf } from "./events/chain.js";
export { verifyChain, type ChainFinding, type ChainFindingKind } from "./audit/chain.js";
export { audit, auditAll, streamHeads, type Anchors, type PaymentAudit, type StoreAudit, type Finding, type FindingKind, type TimelineRow } from "./audit/audit.js";
export { replayStore, replayPayment, type ReplaySummary, type IllegalTransition } from "./audit/replay.js";
export { exportEvents, importEvents, ImportRefused, type ImportResult } from "./audit/transfer.js";
export { asOf, type AsOf } from "./audit/as-of.js";
export { diagram, machineGraph, type MachineGraph, type DiagramFormat, type DiagramOptions } from "./audit/diagram.js";
export { eventsStore, type AuditSource } from "./audit/source.js";
export { catchUpReadModels, type JoinedReadModels } from "./audit/read-models.js";
// what auditAll({ feed }) and catchUpReadModels(source, feed) compare and catch up of the webhook feed
export { feedAudit } from "./webhooks/feed-audit.js";
// webhooks and the event feed (src/webhooks)
export { createWebhooks, verifyWebhook, signatureHeader, SIGNATURE_HEADER, PUBLIC_EVENT_TYPES, type Webhooks, type WebhooksOptions, type PublicEvent, type PublicEventType } from "./webhooks/index.js";
