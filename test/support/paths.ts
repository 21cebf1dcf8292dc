// Path walking support: the machine's simple paths (xstate/graph) over a set of intent variants,
// and a driver that makes the engine take each step of a path through its public API.
import { getShortestPaths, getSimplePaths } from "xstate/graph";
import type { AttemptEvent, Authorization, Card, PaymentEvent, PaymentEventOf } from "../../machines/events.js";
import { applyPaymentEvent, type PaymentSnapshot } from "../../machines/fold.js";
import { paymentMachine } from "../../machines/payment.js";
import { decideAuthorize } from "../../src/engine/deciders/authorize.js";
import type { Engine } from "../../src/engine.js";
import type { AttemptFault } from "../../src/engine/handlers/pipeline.js";
import { collectProcesses } from "../../machines/client-sdk.js";
import type { AuthorizationOutcome, RecordedOutcome } from "../../src/processors/port.js";
import { TEST_CARD, type ScriptedProcessors } from "./scripted-processor.js";

type Intent = PaymentEventOf<"PaymentIntentCreated">["data"];

/** Intent shapes that together reach every transition of the machine. */
export const VARIANTS = {
  terminal_manual: { account: "acct_a", payment_method_types: "card_present", capture_method: "manual", customer: null, pm: null, saving: false },
  terminal_automatic: { account: "acct_a", payment_method_types: "card_present", capture_method: "automatic", customer: null, pm: null, saving: false },
  stored_manual: { account: "acct_a", payment_method_types: "card", capture_method: "manual", customer: "cus_1", pm: "pm_card_visa", saving: false },
  stored_automatic: { account: "acct_a", payment_method_types: "card", capture_method: "automatic", customer: "cus_1", pm: "pm_card_visa", saving: false },
  sdk_form_saving: { account: "acct_b", payment_method_types: "card", capture_method: "manual", customer: null, pm: null, saving: true },
  sdk_reader_customer: { account: "acct_b", payment_method_types: "card_present", capture_method: "manual", customer: "cus_2", pm: null, saving: false },
} as const;
export type Variant = keyof typeof VARIANTS;

/** Each account has an asynchronous processor A terminal and a processor B reader. */
export type World = Record<string, { asyncTerminal: string; reader: string }>;

const AMOUNT = "10.00";
const PARTIAL_CAPTURE = "7.50";
const PARTIAL_REFUND = "2.50";

function createdEvent(variant: Variant): PaymentEvent {
  const v = VARIANTS[variant];
  return {
    type: "PaymentIntentCreated",
    version: 2,
    data: {
      payment_id: `model_${variant}`,
      external_account_id: v.account,
      amount: AMOUNT,
      currency: "USD",
      payment_method_types: v.payment_method_types,
      capture_method: v.capture_method,
      processor: v.account === "acct_a" ? "A" : "B",
      external_transaction_id: variant,
      external_customer_id: v.customer,
      payment_method_id: v.pm,
      stored_card: v.pm ? { ...TEST_CARD, type: "card_not_present" } : null,
      allow_saving_card: v.saving,
      client_secret: null,
      date_created: "model",
    },
  };
}

const cardType = (intent: Intent): Card["type"] => (intent.payment_method_types === "card" ? "card_not_present" : "card_present");

function authorizationFor(snapshot: PaymentSnapshot): Authorization {
  const intent = snapshot.context.intent!;
  return {
    amount_authorized: intent.amount,
    tip_amount: "0.00",
    donation_amount: "0.00",
    authorization_code: "A1B2C3",
    card: snapshot.context.card ?? { ...TEST_CARD, type: cardType(intent) },
    avs_response_code: 0,
    avs_response_message: "Address and postal code match",
  };
}

/** A crash right after the next attempt is recorded (before the processor is called), when armed. */
export const crash = { armed: false };
export const crashFault: AttemptFault = (point) => {
  if (point === "after_attempt" && crash.armed) {
    crash.armed = false;
    throw new Error("crash after the attempt");
  }
};

const MODEL_ATTEMPT = "at_model";
const MODEL_REFERENCE = "ref_model";

/**
 * The authorization an authorize call starts in this state (on the account's asynchronous terminal,
 * else without one), as its decider decides it, if any: where the caller's reference can go.
 */
function authorizationAttemptIn(world: World, snapshot: PaymentSnapshot): AttemptEvent | null {
  const intent = snapshot.context.intent!;
  const ref = { external_account_id: intent.external_account_id, payment_id: intent.payment_id };
  const terminal = { terminal_id: world[intent.external_account_id]!.asyncTerminal, external_account_id: intent.external_account_id, terminal_type: "A_async" as const, label: null, serial_number: null, date_created: intent.date_created };
  for (const [input, context] of [[{ ...ref, terminal_id: terminal.terminal_id }, { terminal }], [ref, {}]] as const) {
    const decision = decideAuthorize(input, snapshot, context);
    if ("attempt" in decision) return { ...decision.attempt, data: { ...decision.attempt.data, attempt_id: MODEL_ATTEMPT } } as AttemptEvent;
  }
  return null;
}

/** Every event worth trying in a state, with payloads that fit its context. */
export function candidateEvents(world: World) {
  return (snapshot: PaymentSnapshot): PaymentEvent[] => {
    const ctx = snapshot.context;
    if (!ctx.intent) return (Object.keys(VARIANTS) as Variant[]).map(createdEvent);
    const intent = ctx.intent;
    const authorization = authorizationFor(snapshot);
    const refundable = (Number(ctx.amount_captured) - Number(ctx.amount_refunded)).toFixed(2);
    const outcomes = processorAnswers(world, snapshot, authorization, refundable);
    // an attempt in flight: only its outcome (found by the reconciler) or its abandonment
    if (ctx.attempt) {
      const answering = { attempt_id: ctx.attempt.data.attempt_id };
      const attempted = (ctx.attempt.data as { amount?: string }).amount;
      // a capture or refund answers with the amount attempted
      const answers = outcomes.filter((e) => ctx.attempt!.type === "AuthorizationAttempted" || attempted === undefined || (e.data as { amount?: string }).amount === attempted);
      return [...answers.map((e) => ({ ...e, data: { ...e.data, ...answering } }) as PaymentEvent), { type: "AttemptAbandoned", version: 1, data: { ...answering, reason: "never_received" } }];
    }
    const attempt_id = MODEL_ATTEMPT;
    // the caller's reference goes with an authorization (spec §4.4): offered where one may start
    // (never between a card form's collect and the processing that goes with it: one command)
    const withCollect = snapshot.value === "payment_method_requested" && collectProcesses(intent);
    const reference: PaymentEvent[] = intent.external_transaction_id !== MODEL_REFERENCE && !withCollect && authorizationAttemptIn(world, snapshot) ? [{ type: "TransactionReferenceGiven", version: 2, data: { external_transaction_id: MODEL_REFERENCE } }] : [];
    return [
      ...outcomes,
      ...reference,
      { type: "AuthorizationAttempted", version: 1, data: { attempt_id, amount: intent.amount } },
      { type: "TerminalAuthorizationAttempted", version: 1, data: { attempt_id, terminal_id: world[intent.external_account_id]!.asyncTerminal, terminal_type: "A_async" } },
      { type: "CaptureAttempted", version: 1, data: { attempt_id, amount: PARTIAL_CAPTURE } },
      { type: "VoidAttempted", version: 1, data: { attempt_id, cancellation_reason: null } },
      { type: "RefundAttempted", version: 1, data: { attempt_id, amount: PARTIAL_REFUND, reason: null } },
      { type: "CardSaveAttempted", version: 1, data: { attempt_id, external_customer_id: intent.external_customer_id ?? "cus_later" } },
    ];
  };
}

/** What processors answer (or report), as events: the outcomes of every command. */
function processorAnswers(world: World, snapshot: PaymentSnapshot, authorization: Authorization, refundable: string): PaymentEvent[] {
  const ctx = snapshot.context;
  const intent = ctx.intent!;
  {
    return [
      { type: "TerminalAuthorizationStarted", version: 1, data: { terminal_id: world[intent.external_account_id]!.asyncTerminal, terminal_type: "A_async" } },
      { type: "PaymentMethodCollected", version: 1, data: { card: { ...TEST_CARD, type: cardType(intent) }, terminal_id: intent.payment_method_types === "card_present" ? world[intent.external_account_id]!.reader : null } },
      { type: "PaymentAuthorized", version: 1, data: authorization },
      { type: "CaptureRequested", version: 1, data: { amount: authorization.amount_authorized, authorization } },
      { type: "PaymentCaptured", version: 1, data: { amount: authorization.amount_authorized, authorization } },
      { type: "CaptureRequested", version: 1, data: { amount: PARTIAL_CAPTURE, authorization: null } },
      { type: "PaymentCaptured", version: 1, data: { amount: PARTIAL_CAPTURE, authorization: null } },
      { type: "AuthorizationFailed", version: 1, data: { last_error: "Canceled by shopper", last_error_code: "USER_CANCEL" } },
      { type: "AuthorizationFailed", version: 1, data: { last_error: "The processor declined the card", last_error_code: "ONLINE_DECLINED" } },
      { type: "AuthorizationFailed", version: 1, data: { last_error: "Your card was declined", last_error_code: null } },
      { type: "PaymentCanceled", version: 1, data: { cancellation_reason: "requested_by_customer" } },
      { type: "PaymentRefunded", version: 1, data: { refund_id: "re_model", amount: PARTIAL_REFUND, reason: null } },
      { type: "PaymentRefunded", version: 1, data: { refund_id: "re_model", amount: refundable, reason: null } },
      { type: "CardSaved", version: 1, data: { payment_method_id: "pm_saved", external_account_id: intent.external_account_id, external_customer_id: intent.external_customer_id ?? "cus_later", card: ctx.card ?? TEST_CARD } },
    ];
  }
}

/**
 * A state's identity for path enumeration: status plus everything the candidate events' payloads
 * and guards depend on. (Paths are then re-folded from their events, so the record compared at
 * each step is the state this very path reached.)
 */
export function serializeState(snapshot: PaymentSnapshot): string {
  const c = snapshot.context;
  return [
    snapshot.value,
    // the variant (the model's payment id names it), and whether the caller's reference was given
    c.intent?.payment_id ?? "-",
    c.intent?.external_transaction_id ?? "-",
    c.terminal?.terminal_type ?? "-",
    c.card ? "card" : "-",
    c.saved_card ? "saved" : "-",
    c.amount_captured,
    c.amount_refunded,
    c.last_error_code ?? "-",
    c.attempt?.type ?? "-",
  ].join("|");
}

/**
 * The automatic-capture pass-through (pmr --PaymentAuthorized--> requires_capture, then the
 * engine captures at once) is one command in the engine, not two steps: walk it through the
 * manual variants (the same transition) and the flow tests.
 */
function walkable(snapshot: PaymentSnapshot, event: PaymentEvent): boolean {
  if (applyPaymentEvent(snapshot, event) === null) return false;
  const intent = snapshot.context.intent;
  return !(event.type === "PaymentAuthorized" && snapshot.value === "payment_method_requested" && intent?.capture_method === "automatic");
}

const isAttempt = (event: PaymentEvent) => event.type.endsWith("Attempted");
const isReference = (event: PaymentEvent) => event.type === "TransactionReferenceGiven";

/**
 * Every simple path without crashes: the engine brackets each processor call itself (attempt and
 * outcome in one command), so these walk the outcome transitions.
 */
export function simplePaths(world: World) {
  return getSimplePaths(paymentMachine, {
    events: candidateEvents(world),
    filterEvents: (s, e) => walkable(s as PaymentSnapshot, e as PaymentEvent) && !isAttempt(e as PaymentEvent) && !isReference(e as PaymentEvent),
    serializeState: (s) => serializeState(s as PaymentSnapshot),
    serializeEvent: (e) => JSON.stringify(e),
  });
}

/**
 * The caller's reference given with an authorization (TransactionReferenceGiven): the shortest path
 * to every state that takes it, the reference, then each step the state takes next. (Through the
 * simple paths it would multiply them by the places a reference can stand.)
 */
export function referencePaths(world: World) {
  const candidates = candidateEvents(world);
  const shortest = getShortestPaths(paymentMachine, {
    events: candidates,
    filterEvents: (s, e) => walkable(s as PaymentSnapshot, e as PaymentEvent) && !isReference(e as PaymentEvent),
    serializeState: (s) => serializeState(s as PaymentSnapshot),
    serializeEvent: (e) => JSON.stringify(e),
  });
  return shortest.flatMap((path) => {
    const state = path.state as PaymentSnapshot;
    const reference = candidates(state).find(isReference);
    const referenced = reference && applyPaymentEvent(state, reference);
    if (!reference || !referenced) return [];
    const then = candidates(referenced).filter((e) => !isReference(e) && walkable(referenced, e));
    return [[], ...then.map((e) => [e])].map((next) => ({ ...path, steps: [...path.steps, { event: reference, state }, ...next.map((event) => ({ event, state: referenced }))] }));
  });
}

/**
 * The attempt states: the shortest path to every state with an attempt in flight (its last step a
 * command stopped by a crash right after its attempt), then each way it ends: the outcome the
 * reconciler finds at the processor, or its abandonment. (Simple paths through attempt states
 * would number in the tens of thousands for the same transitions.)
 */
export function attemptPaths(world: World) {
  const candidates = candidateEvents(world);
  const shortest = getShortestPaths(paymentMachine, {
    events: candidates,
    filterEvents: (s, e) => walkable(s as PaymentSnapshot, e as PaymentEvent),
    serializeState: (s) => serializeState(s as PaymentSnapshot),
    serializeEvent: (e) => JSON.stringify(e),
  });
  return shortest
    .filter((path) => (path.state as PaymentSnapshot).context.attempt !== null)
    .flatMap((path) =>
      candidates(path.state as PaymentSnapshot)
        .filter((e) => walkable(path.state as PaymentSnapshot, e))
        .map((event) => ({ ...path, steps: [...path.steps, { event, state: path.state }] })),
    );
}

/**
 * Makes the engine take the next step of a path (`steps[0]`) with one command; returns how many of
 * the path's steps that command took. One, except where one command takes several: a processor B
 * card form's collect (card not present) also processes the payment (spec §4.8: collect, then save
 * the card), so it takes the authorization outcome that follows it too (or, before a crash, its
 * attempt). A collected card-not-present card left unprocessed (the path ends there, or cancels) is
 * a collect whose processing the processor never received: collect, crash after the attempt, and
 * the reconciler abandons it. The payment id is set by the first step.
 */
export async function drive(
  engine: Engine,
  scripted: ScriptedProcessors,
  world: World,
  before: PaymentSnapshot,
  steps: PaymentEvent[],
  payment: { id: string; account: string; client_secret: string | null },
): Promise<number> {
  const [event, next] = steps as [PaymentEvent, PaymentEvent | undefined];
  if (before.context.attempt) {
    await resolveAttempt(engine, scripted, payment.id, recordedFor(before.context.attempt, event));
    return 1;
  }
  if (event.type.endsWith("Attempted")) {
    crash.armed = true;
    await stoppedByCrash(makeAttempt(engine, world, before, event as AttemptEvent, payment), event.type);
    return 1;
  }
  if (event.type === "TransactionReferenceGiven") {
    // it goes with an authorization, in one command: the one the path takes next, or else one the
    // processor never received (a crash after its attempt; the reconciler abandons it)
    // a reference given by a caller (the paths' samples); none (null) is only ever given back by a refused attempt
    const reference = { external_payment_id: event.data.external_transaction_id! };
    if (next?.type === "AuthorizationAttempted" || next?.type === "TerminalAuthorizationAttempted") {
      crash.armed = true;
      await stoppedByCrash(makeAttempt(engine, world, before, next, payment, reference), next.type);
      return 2;
    }
    if (next && authorizedBy(before, next)) {
      await driveOne(engine, scripted, world, before, next, payment, reference);
      return 2;
    }
    const attempt = authorizationAttemptIn(world, before)!;
    crash.armed = true;
    await stoppedByCrash(makeAttempt(engine, world, before, attempt, payment, reference), attempt.type);
    await resolveAttempt(engine, scripted, payment.id, null);
    return 1;
  }
  if (event.type === "PaymentMethodCollected" && collectProcesses(before.context.intent!)) {
    const reader = event.data.terminal_id ? { terminal_id: world[payment.account]!.reader } : {};
    const collect = () => engine.collectPaymentMethod({ client_secret: payment.client_secret!, ...reader });
    if (next?.type === "AuthorizationAttempted") {
      crash.armed = true;
      await stoppedByCrash(collect(), next.type);
      return 2;
    }
    const outcome = next && authorizationOutcome(next);
    if (outcome) {
      scripted.nextAuthorization = outcome;
      await collect();
      return 2;
    }
    crash.armed = true;
    await stoppedByCrash(collect(), "AuthorizationAttempted");
    await resolveAttempt(engine, scripted, payment.id, null);
    return 1;
  }
  await driveOne(engine, scripted, world, before, event, payment);
  return 1;
}

/** Whether an authorize call makes this step (driveOne): a terminal starting, or an authorization's outcome. */
function authorizedBy(before: PaymentSnapshot, event: PaymentEvent): boolean {
  if (event.type === "TerminalAuthorizationStarted") return true;
  const onTerminalA = before.value === "payment_method_requested" && before.context.terminal?.terminal_type === "A_async";
  return authorizationOutcome(event) !== null && ["requires_payment_method", "error", "payment_method_requested"].includes(String(before.value)) && !onTerminalA;
}

/** The authorization outcome an authorize call answers with to append this event, if it is one. */
function authorizationOutcome(event: PaymentEvent): AuthorizationOutcome | null {
  switch (event.type) {
    case "AuthorizationFailed":
      return { kind: "failed", ...event.data };
    case "PaymentAuthorized":
      return { kind: "authorized", authorization: event.data };
    case "CaptureRequested":
    case "PaymentCaptured":
      return event.data.authorization ? { kind: event.type === "PaymentCaptured" ? "captured" : "capture_requested", authorization: event.data.authorization } : null;
    default:
      return null;
  }
}

/** A command the armed crash fault must stop right after its attempt. */
async function stoppedByCrash(made: Promise<unknown>, attempted: string): Promise<void> {
  await made.then(
    () => {
      throw new Error(`${attempted}: the command did not stop after its attempt`);
    },
    (error: Error) => {
      if (error.message !== "crash after the attempt") throw error;
    },
  );
}

/** One engine command for one step of a path. */
async function driveOne(
  engine: Engine,
  scripted: ScriptedProcessors,
  world: World,
  before: PaymentSnapshot,
  event: PaymentEvent,
  payment: { id: string; account: string; client_secret: string | null },
  /** Sent with an authorize call (the caller's reference). */
  withAuthorize: { external_payment_id?: string | number } = {},
): Promise<void> {
  const ref = { external_account_id: payment.account, payment_id: payment.id };
  const status = before.value;
  const onTerminalA = status === "payment_method_requested" && before.context.terminal?.terminal_type === "A_async";
  switch (event.type) {
    case "PaymentIntentCreated": {
      const v = VARIANTS[event.data.external_transaction_id as Variant];
      const created = await engine.createIntent({
        external_account_id: v.account,
        amount: AMOUNT,
        payment_method_types: v.payment_method_types,
        capture_method: v.capture_method,
        external_payment_id: event.data.external_transaction_id!,
        ...(v.customer ? { external_customer_id: v.customer } : {}),
        ...(v.pm ? { payment_method_id: v.pm } : {}),
        ...(v.saving ? { allow_saving_card: true } : {}),
      });
      Object.assign(payment, { id: created.payment_id, account: v.account, client_secret: created.client_secret });
      return;
    }
    case "TerminalAuthorizationStarted":
      await engine.authorize({ ...ref, ...withAuthorize, terminal_id: world[payment.account]!.asyncTerminal });
      return;
    case "PaymentMethodCollected":
      await engine.collectPaymentMethod({ client_secret: payment.client_secret!, ...(event.data.terminal_id ? { terminal_id: world[payment.account]!.reader } : {}) });
      return;
    case "PaymentAuthorized":
    case "AuthorizationFailed":
    case "CaptureRequested":
    case "PaymentCaptured": {
      if (status === "requires_capture") {
        scripted.nextCapture = event.type === "PaymentCaptured" ? "captured" : "capture_requested";
        await engine.capture({ ...ref, amount: (event as PaymentEventOf<"CaptureRequested">).data.amount });
        return;
      }
      if (status === "capture_requested") {
        await scripted.report(payment.id, { kind: "capture_settled", amount: (event as PaymentEventOf<"PaymentCaptured">).data.amount });
        return;
      }
      const outcome = authorizationOutcome(event)!;
      if (onTerminalA) {
        await scripted.report(payment.id, outcome);
        return;
      }
      scripted.nextAuthorization = outcome;
      await engine.authorize({ ...ref, ...withAuthorize });
      return;
    }
    case "PaymentCanceled":
      await engine.cancel({ ...ref, cancellation_reason: event.data.cancellation_reason ?? undefined });
      return;
    case "PaymentRefunded":
      await engine.refund({ ...ref, amount: event.data.amount });
      return;
    case "CardSaved":
      scripted.nextPaymentMethodId = event.data.payment_method_id;
      await engine.saveCard({ ...ref, external_customer_id: event.data.external_customer_id });
      return;
  }
}

/** Runs the command that makes this attempt (the crash fault stops it right after the attempt). */
function makeAttempt(engine: Engine, world: World, before: PaymentSnapshot, event: AttemptEvent, payment: { id: string; account: string; client_secret: string | null }, withAuthorize?: { external_payment_id: string | number }) {
  const ref = { external_account_id: payment.account, payment_id: payment.id };
  switch (event.type) {
    case "AuthorizationAttempted":
      // a collected card is processed by the client SDK, or authorized by the merchant (with a reference)
      return before.value === "payment_method_requested" && !withAuthorize ? engine.processPayment({ client_secret: payment.client_secret! }) : engine.authorize({ ...ref, ...withAuthorize });
    case "TerminalAuthorizationAttempted":
      return engine.authorize({ ...ref, ...withAuthorize, terminal_id: world[payment.account]!.asyncTerminal });
    case "CaptureAttempted":
      return engine.capture({ ...ref, amount: event.data.amount });
    case "VoidAttempted":
      return engine.cancel(ref);
    case "RefundAttempted":
      return engine.refund({ ...ref, amount: event.data.amount });
    case "CardSaveAttempted":
      return engine.saveCard({ ...ref, external_customer_id: event.data.external_customer_id });
  }
}

/**
 * An attempt a crash left open is resolved by the reconciler: the processor's record (set here to
 * the path's outcome, under the engine's own attempt id) becomes the outcome; no record abandons it.
 */
async function resolveAttempt(engine: Engine, scripted: ScriptedProcessors, paymentId: string, recorded: RecordedOutcome | null) {
  const events = await engine.store.readStream(`payment-${paymentId}`);
  const attemptId = (events.at(-1)!.data as { attempt_id: string }).attempt_id;
  if (recorded) scripted.ledger.set(attemptId, recorded);
  // (other paths' payments may still have attempts open: they are closed too, and not looked at again)
  const report = await engine.reconcile({ graceMs: 0 });
  if (!report.resolved.some((r) => r.payment_id === paymentId && r.attempt_id === attemptId)) throw new Error(`reconciler did not resolve ${attemptId}`);
}

function recordedFor(open: AttemptEvent, event: PaymentEvent): RecordedOutcome | null {
  switch (event.type) {
    case "AttemptAbandoned":
      return null;
    case "TerminalAuthorizationStarted":
      return { call: "start_terminal", outcome: null };
    case "PaymentAuthorized":
      return { call: "authorize", outcome: { kind: "authorized", authorization: event.data } };
    case "AuthorizationFailed":
      return { call: "authorize", outcome: { kind: "failed", last_error: event.data.last_error, last_error_code: event.data.last_error_code } };
    case "CaptureRequested":
    case "PaymentCaptured": {
      const kind = event.type === "PaymentCaptured" ? "captured" : "capture_requested";
      if (open.type === "CaptureAttempted") return { call: "capture", outcome: { kind } };
      return { call: "authorize", outcome: { kind, authorization: event.data.authorization! } };
    }
    case "PaymentCanceled":
      return { call: "void" };
    case "PaymentRefunded":
      return { call: "refund", refund_id: event.data.refund_id };
    case "CardSaved":
      return { call: "save_card", payment_method_id: event.data.payment_method_id };
    default:
      throw new Error(`${event.type} answers no attempt`);
  }
}
