// Long random command sequences (fast-check `fc.commands`) against a hand-written model of the
// payment rules. Valid and invalid commands are mixed: an invalid one must fail with a typed
// error and append nothing. After every step the amount invariants hold and the processor was
// asked for exactly the amounts recorded; after every run,
// replaying the stored events reproduces the live records byte for byte, and rebuilding every
// read model from zero gives the live read models and the same lists (every filter, every page
// through its cursors), each the model's: the documents filtered and sorted newest first.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { paymentRecord } from "../../src/present/payment-record.js";
import { paymentsProjection, type PaymentDoc } from "../../projections/payments.js";
import { manualClock } from "../../src/clock.js";
import { createEngine, type Engine } from "../../src/engine.js";
import { PROJECTIONS } from "../../projections/registry.js";
import { CardflowError } from "../../src/errors.js";
import { sequentialIds } from "../../src/ids.js";
import type { AuthorizationOutcome } from "../../src/processors/port.js";
import { replay } from "../../src/audit/replay.js";
import { assertAmountInvariants } from "../support/invariants.js";
import { expectedPayments, filtersOf, listings, pagesOf } from "../support/listings.js";
import { amountMismatches } from "../support/processor-amounts.js";
import { scriptedProcessors, TEST_CARD, type ScriptedProcessors } from "../support/scripted-processor.js";

type Variant = "stored_manual" | "stored_automatic" | "terminal_manual" | "sdk_saving";
type Status = "requires_payment_method" | "payment_method_requested" | "requires_capture" | "capture_requested" | "succeeded" | "error" | "canceled";

/** The model: what a payment should be, written from the spec's rules, not from the machine. */
interface ModelPayment {
  variant: Variant;
  status: Status;
  amount: number; // minor units
  authorized: number;
  captured: number;
  refunded: number;
  cardCollected: boolean;
  saved: boolean;
}
interface Model {
  payments: ModelPayment[];
}
interface Real {
  engine: Engine;
  scripted: ScriptedProcessors;
  ids: string[];
  terminal: string;
  secrets: (string | null)[];
}

const ACCOUNT = { stored_manual: "acct_a", stored_automatic: "acct_a", terminal_manual: "acct_a", sdk_saving: "acct_b" } as const;
const cents = (n: number) => (n / 100).toFixed(2);
const retryable = (s: Status) => s === "requires_payment_method" || s === "error";

function authorization(amount: number, type: "card_present" | "card_not_present") {
  return {
    amount_authorized: cents(amount),
    tip_amount: "0.00",
    donation_amount: "0.00",
    authorization_code: "OK1234",
    card: { ...TEST_CARD, type },
    avs_response_code: 0,
    avs_response_message: "match",
  };
}

const tally = { valid: 0, invalid: 0, longest: 0 };

/** Runs a command that the model says is valid (apply) or invalid (nothing may be appended). */
async function expectOutcome(real: Real, valid: boolean, run: () => Promise<unknown>, apply: () => void) {
  tally[valid ? "valid" : "invalid"]++;
  const before = (await real.engine.store.readAll()).length;
  if (valid) {
    await run();
    apply();
  } else {
    await expect(run()).rejects.toBeInstanceOf(CardflowError);
    expect((await real.engine.store.readAll()).length).toBe(before);
  }
}

async function checkPayment(model: Model, real: Real, i: number) {
  const p = model.payments[i]!;
  const record = await real.engine.getPayment({ external_account_id: ACCOUNT[p.variant], payment_id: real.ids[i]! });
  expect(record.status).toBe(p.status);
  expect(record.amount_authorized).toBe(cents(p.authorized));
  expect(record.amount_captured).toBe(cents(p.captured));
  expect(record.amount_refunded).toBe(cents(p.refunded));
  expect(record.payment_method_id !== null && p.variant.startsWith("stored") === false).toBe(p.saved);
  assertAmountInvariants(record);
  // the processor was asked for exactly the amounts the events record
  expect(await amountMismatches(real.engine.store, real.scripted.ledger, real.ids[i]!)).toEqual([]);
}

type Cmd = fc.AsyncCommand<Model, Real>;
const cmd = (name: string, check: (m: Model) => boolean, run: (m: Model, r: Real) => Promise<void>): Cmd => ({
  check,
  run,
  toString: () => name,
});
const hasPayment = (i: number) => (m: Model) => m.payments.length > i;
/**
 * The payment a command acts on: n picks among the payments where the command fits (so valid
 * commands are common), or — when n is a multiple of 4, or none fits — among all of them.
 */
const target = (m: Model, n: number, fits: (p: ModelPayment) => boolean) => {
  const fitting = m.payments.map((p, i) => (fits(p) ? i : -1)).filter((i) => i >= 0);
  return n % 4 === 0 || fitting.length === 0 ? n % m.payments.length : fitting[n % fitting.length]!;
};

const create = (variant: Variant, amount: number) =>
  cmd(`create(${variant}, ${amount})`, () => true, async (m, r) => {
    const created = await r.engine.createIntent({
      external_account_id: ACCOUNT[variant],
      amount: cents(amount),
      payment_method_types: variant === "terminal_manual" ? "card_present" : "card",
      capture_method: variant === "stored_automatic" ? "automatic" : "manual",
      ...(variant.startsWith("stored") ? { payment_method_id: "pm_card_visa", external_customer_id: "cus_1" } : {}),
      ...(variant === "sdk_saving" ? { allow_saving_card: true } : {}),
    });
    r.ids.push(created.payment_id);
    r.secrets.push(created.client_secret);
    m.payments.push({ variant, status: "requires_payment_method", amount, authorized: 0, captured: 0, refunded: 0, cardCollected: variant.startsWith("stored"), saved: false });
    await checkPayment(m, r, m.payments.length - 1);
  });

const authorizeStored = (n: number, outcome: "approve" | "decline" | "timeout") =>
  cmd(`authorizeStored(${n}, ${outcome})`, hasPayment(0), async (m, r) => {
    const i = target(m, n, (p) => p.variant.startsWith("stored") && retryable(p.status));
    const p = m.payments[i]!;
    const valid = p.variant.startsWith("stored") && retryable(p.status);
    const automatic = p.variant === "stored_automatic";
    const answer: AuthorizationOutcome =
      outcome === "approve"
        ? { kind: automatic ? "captured" : "authorized", authorization: authorization(p.amount, "card_not_present") }
        : { kind: "failed", last_error: outcome, last_error_code: outcome === "decline" ? "ONLINE_DECLINED" : "WEB_TIMEOUT" };
    r.scripted.nextAuthorization = answer;
    await expectOutcome(r, valid, () => r.engine.authorize({ external_account_id: ACCOUNT[p.variant], payment_id: r.ids[i]! }), () => {
      if (outcome === "approve") {
        p.authorized = p.amount;
        p.status = automatic ? "succeeded" : "requires_capture";
        if (automatic) p.captured = p.amount;
      } else p.status = outcome === "decline" ? "error" : "requires_payment_method";
    });
    await checkPayment(m, r, i);
  });

const startTerminal = (n: number) =>
  cmd(`startTerminal(${n})`, hasPayment(0), async (m, r) => {
    const i = target(m, n, (p) => p.variant === "terminal_manual" && retryable(p.status));
    const p = m.payments[i]!;
    const valid = p.variant === "terminal_manual" && retryable(p.status);
    await expectOutcome(r, valid, () => r.engine.authorize({ external_account_id: ACCOUNT[p.variant], payment_id: r.ids[i]!, terminal_id: r.terminal }), () => {
      p.status = "payment_method_requested";
    });
    await checkPayment(m, r, i);
  });

const terminalOutcome = (n: number, outcome: "approve" | "cancel" | "decline") =>
  cmd(`terminalOutcome(${n}, ${outcome})`, hasPayment(0), async (m, r) => {
    const i = target(m, n, (p) => p.variant === "terminal_manual" && p.status === "payment_method_requested");
    const p = m.payments[i]!;
    const valid = p.variant === "terminal_manual" && p.status === "payment_method_requested";
    const answer: AuthorizationOutcome =
      outcome === "approve"
        ? { kind: "authorized", authorization: authorization(p.amount, "card_present") }
        : { kind: "failed", last_error: outcome, last_error_code: outcome === "cancel" ? "USER_CANCEL" : "OFFLINE_DECLINED" };
    await expectOutcome(r, valid, () => r.scripted.report(r.ids[i]!, answer), () => {
      if (outcome === "approve") {
        p.authorized = p.amount;
        p.cardCollected = true;
        p.status = "requires_capture";
      } else p.status = outcome === "cancel" ? "requires_payment_method" : "error";
    });
    await checkPayment(m, r, i);
  });

const collectAndProcess = (n: number, outcome: "approve" | "decline") =>
  cmd(`collectAndProcess(${n}, ${outcome})`, hasPayment(0), async (m, r) => {
    const i = target(m, n, (p) => p.variant === "sdk_saving" && retryable(p.status));
    const p = m.payments[i]!;
    const canCollect = p.variant === "sdk_saving" && retryable(p.status);
    // the card form's collect also processes the payment (spec §4.8: collect, then save the card)
    r.scripted.nextAuthorization =
      outcome === "approve" ? { kind: "authorized", authorization: authorization(p.amount, "card_not_present") } : { kind: "failed", last_error: "declined", last_error_code: null };
    await expectOutcome(r, canCollect, () => r.engine.collectPaymentMethod({ client_secret: r.secrets[i] ?? `${r.ids[i]}_secret_none` }), () => {
      p.cardCollected = true;
      if (outcome === "approve") {
        p.authorized = p.amount;
        p.status = "requires_capture";
      } else p.status = "error";
    });
    await checkPayment(m, r, i);
  });

const capture = (n: number, how: "full" | "partial" | "too_much" | "bad_decimals") =>
  cmd(`capture(${n}, ${how})`, hasPayment(0), async (m, r) => {
    const i = target(m, n, (p) => p.status === "requires_capture");
    const p = m.payments[i]!;
    const amount = how === "full" ? p.authorized : how === "partial" ? Math.max(1, Math.floor(p.authorized / 3)) : p.authorized + 1;
    const wire = how === "bad_decimals" ? "1.001" : cents(amount);
    const valid = p.status === "requires_capture" && (how === "full" || how === "partial");
    r.scripted.nextCapture = "captured";
    await expectOutcome(r, valid, () => r.engine.capture({ external_account_id: ACCOUNT[p.variant], payment_id: r.ids[i]!, amount: wire }), () => {
      p.captured = amount;
      p.status = "succeeded";
    });
    await checkPayment(m, r, i);
  });

const cancel = (n: number) =>
  cmd(`cancel(${n})`, hasPayment(0), async (m, r) => {
    const i = target(m, n, (p) => p.status !== "succeeded" && p.status !== "canceled");
    const p = m.payments[i]!;
    const valid = ["requires_payment_method", "payment_method_requested", "requires_capture", "error"].includes(p.status);
    await expectOutcome(r, valid, () => r.engine.cancel({ external_account_id: ACCOUNT[p.variant], payment_id: r.ids[i]! }), () => {
      p.status = "canceled";
    });
    await checkPayment(m, r, i);
  });

const refund = (n: number, how: "part" | "rest" | "too_much") =>
  cmd(`refund(${n}, ${how})`, hasPayment(0), async (m, r) => {
    const i = target(m, n, (p) => p.status === "succeeded" && p.captured > p.refunded);
    const p = m.payments[i]!;
    const left = p.captured - p.refunded;
    const amount = how === "part" ? Math.max(1, Math.floor(left / 2)) : how === "rest" ? left : left + 1;
    const valid = p.status === "succeeded" && how !== "too_much" && amount > 0 && amount <= left;
    await expectOutcome(r, valid, () => r.engine.refund({ external_account_id: ACCOUNT[p.variant], payment_id: r.ids[i]!, amount: cents(Math.max(amount, 1)) }), () => {
      p.refunded += amount;
    });
    await checkPayment(m, r, i);
  });

const saveCard = (n: number) =>
  cmd(`saveCard(${n})`, hasPayment(0), async (m, r) => {
    const i = target(m, n, (p) => p.variant === "sdk_saving" && p.cardCollected && !p.saved);
    const p = m.payments[i]!;
    // processor B card not present with allow_saving_card: before or after capture, once
    const savable = p.variant === "sdk_saving" && p.cardCollected && (p.status === "requires_capture" || p.status === "succeeded");
    const before = (await r.engine.store.readAll()).length;
    r.scripted.nextPaymentMethodId = `pm_${i}`;
    await expectOutcome(r, savable || p.saved, () => r.engine.saveCard({ external_account_id: ACCOUNT[p.variant], payment_id: r.ids[i]!, external_customer_id: "cus_9" }), () => {
      p.saved = true;
    });
    if (p.saved && !savable) expect((await r.engine.store.readAll()).length).toBe(before); // saving again appends nothing
    await checkPayment(m, r, i);
  });

const unknownPayment = () =>
  cmd("capture(unknown payment)", () => true, async (_m, r) => {
    await expectOutcome(r, false, () => r.engine.capture({ external_account_id: "acct_a", payment_id: "pi_missing", amount: "1.00" }), () => undefined);
  });

const commands = [
  fc.tuple(fc.constantFrom<Variant>("stored_manual", "stored_automatic", "terminal_manual", "sdk_saving"), fc.integer({ min: 1, max: 1_000_000 })).map(([v, a]) => create(v, a)),
  fc.tuple(fc.nat(), fc.constantFrom("approve", "decline", "timeout") as fc.Arbitrary<"approve" | "decline" | "timeout">).map(([n, o]) => authorizeStored(n, o)),
  fc.nat().map(startTerminal),
  fc.tuple(fc.nat(), fc.constantFrom("approve", "cancel", "decline") as fc.Arbitrary<"approve" | "cancel" | "decline">).map(([n, o]) => terminalOutcome(n, o)),
  fc.tuple(fc.nat(), fc.constantFrom("approve", "decline") as fc.Arbitrary<"approve" | "decline">).map(([n, o]) => collectAndProcess(n, o)),
  fc.tuple(fc.nat(), fc.constantFrom("full", "partial", "too_much", "bad_decimals") as fc.Arbitrary<"full" | "partial" | "too_much" | "bad_decimals">).map(([n, h]) => capture(n, h)),
  fc.nat().map(cancel),
  fc.tuple(fc.nat(), fc.constantFrom("part", "rest", "too_much") as fc.Arbitrary<"part" | "rest" | "too_much">).map(([n, h]) => refund(n, h)),
  fc.nat().map(saveCard),
  fc.constant(null).map(unknownPayment),
];

async function setup(): Promise<Real> {
  const scripted = scriptedProcessors();
  const engine = createEngine({ processors: scripted, clock: manualClock(), ids: sequentialIds() });
  await engine.openAccount({ external_account_id: "acct_a", processor: "A" });
  await engine.openAccount({ external_account_id: "acct_b", processor: "B" });
  const { terminal_id } = await engine.registerTerminal({ external_account_id: "acct_a", terminal_type: "A_async" });
  return { engine, scripted, ids: [], secrets: [], terminal: terminal_id };
}

describe("random command sequences against the model", () => {
  it("agree with the model; invalid commands append nothing; replay and rebuild reproduce the live state", async () => {
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 100, size: "max" }), async (cmds) => {
        tally.longest = Math.max(tally.longest, [...cmds].length);
        const real = await setup();
        await fc.asyncModelRun(() => ({ model: { payments: [] }, real }), cmds);

        // replay every payment stream purely: byte for byte the live record
        for (const id of real.ids) {
          const events = await real.engine.store.readStream(`payment-${id}`);
          const report = replay(events);
          expect(report.illegal).toEqual([]);
          const live = await real.engine.getPayment({ external_account_id: events[0]!.data ? (events[0]!.data as { external_account_id: string }).external_account_id : "", payment_id: id });
          expect(JSON.stringify(paymentRecord(report.final, events.at(-1)!.metadata.request_id))).toBe(JSON.stringify(live));
        }
        // rebuild every read model from zero: equal to the live one, every list (each filter, page by
        // page through its cursors) too; and each list is the model's: the documents filtered, newest first
        await real.engine.projections.catchUp();
        const liveListings = await listings(real.engine.readModels);
        const docs = await real.engine.readModels.list<PaymentDoc>(paymentsProjection.name, "");
        for (const f of filtersOf(docs)) expect((await pagesOf(real.engine.readModels, f, 3)).flat(), JSON.stringify(f)).toEqual(expectedPayments(docs, f));
        for (const { name } of PROJECTIONS) {
          const live = await real.engine.readModels.list(name, "");
          await real.engine.projections.rebuild(name);
          expect(JSON.stringify(await real.engine.readModels.list(name, ""))).toBe(JSON.stringify(live));
        }
        expect(await listings(real.engine.readModels)).toBe(liveListings);
        await real.engine.close();
      }),
      { numRuns: 60 },
    );
    // the generator really produced long mixed sequences
    console.info(`model test: ${tally.valid} valid and ${tally.invalid} invalid commands, longest sequence ${tally.longest}`);
    expect(tally.longest).toBeGreaterThanOrEqual(50);
    expect(tally.valid).toBeGreaterThan(300);
    expect(tally.invalid).toBeGreaterThan(300);
  });
});
