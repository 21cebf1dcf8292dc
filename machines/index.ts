// `cardflow/machines`: the payment machine and its domain events, for diagram, replay or
// verification tooling that needs no engine, store or server.
export { paymentMachine, PAYMENT_STATUSES, initialPaymentContext, type PaymentMachine, type PaymentContext, type PaymentStatus } from "./payment.js";
export * from "./events.js";
export { FAILURES, LAST_ERROR_CODES, failureLeadsTo, type LastErrorCode, type FailureStatus } from "./failures.js";
export { applyPaymentEvent, applyStored, foldStored, stateOf, snapshotOf, acceptedEventTypes, hasTag, guardHolds, initialPaymentSnapshot, type PaymentState, type PaymentSnapshot } from "./fold.js";
export { STATUS_TAGS, statusesTagged, type StatusTag } from "./statuses.js";
export { machineTransitions, machineStates, finalStates, type MachineTransition } from "./transitions.js";
export { upcast, upcaster, storedFormOf, createEventRegistry, EVENT_REGISTRY, EARLIER_VERSIONS, schemaFingerprint, type EventRegistry, type EarlierVersion } from "./event-versions.js";
export { machineDefinition, machineHash, machineJson, type MachineDefinition } from "./definition.js";
