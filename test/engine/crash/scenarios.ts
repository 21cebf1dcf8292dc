// The crash matrix's commands: each brings a payment to the state before one processor call
// (with the simulators), then makes the call. Shared by the in-process crash test (faults that
// throw) and the child-process one (SIGKILL at the same points).
import type { AttemptType } from "../../../machines/events.js";
import type { Engine } from "../../../src/engine.js";
import type { Simulators } from "../../../src/processors/simulator.js";
import { allAmountMismatches } from "../../support/processor-amounts.js";

export const A = "acct_crash_a";
export const B = "acct_crash_b";

export interface Prepared {
  ref: { external_account_id: string; payment_id: string };
  client_secret: string | null;
  terminal_id: string | null;
}

export interface Scenario {
  /** The attempt the command makes (where the crash is injected). */
  attempt: AttemptType;
  prepare(engine: Engine): Promise<Prepared>;
  /** The command; run again after the restart as a client would retry it. */
  run(engine: Engine, p: Prepared): Promise<unknown>;
}

export const POINTS = ["after_attempt", "after_call", "after_outcome"] as const;
export type Point = (typeof POINTS)[number];

export async function openAccounts(engine: Engine) {
  await engine.openAccount({ external_account_id: A, processor: "A" });
  await engine.openAccount({ external_account_id: B, processor: "B" });
}

const stored = async (engine: Engine, capture_method: "manual" | "automatic"): Promise<Prepared> => {
  const { payment_id } = await engine.createIntent({ external_account_id: A, amount: "10.00", payment_method_types: "card", capture_method, payment_method_id: "pm_card_visa", external_customer_id: "cus_1" });
  return { ref: { external_account_id: A, payment_id }, client_secret: null, terminal_id: null };
};
const authorized = async (engine: Engine, capture_method: "manual" | "automatic") => {
  const p = await stored(engine, capture_method);
  await engine.authorize(p.ref);
  return p;
};
/** A card-not-present intent the processor B card form may collect (the collect processes it). */
const cardForm = async (engine: Engine, allow_saving_card: boolean): Promise<Prepared> => {
  const { payment_id, client_secret } = await engine.createIntent({ external_account_id: B, amount: "10.00", payment_method_types: "card", capture_method: "manual", allow_saving_card });
  return { ref: { external_account_id: B, payment_id }, client_secret, terminal_id: null };
};
const collectOnForm = (engine: Engine, p: Prepared) => engine.collectPaymentMethod({ client_secret: p.client_secret! });
/** A card the processor B reader collected: process-payment authorizes it. */
const collectedOnReader = async (engine: Engine): Promise<Prepared> => {
  const { terminal_id } = await engine.registerTerminal({ external_account_id: B, terminal_type: "B_reader" });
  const { payment_id, client_secret } = await engine.createIntent({ external_account_id: B, amount: "10.00", payment_method_types: "card_present", capture_method: "manual" });
  await engine.collectPaymentMethod({ client_secret: client_secret!, terminal_id });
  return { ref: { external_account_id: B, payment_id }, client_secret, terminal_id };
};

export const SCENARIOS: Record<string, Scenario> = {
  "stored-card charge": { attempt: "AuthorizationAttempted", prepare: (e) => stored(e, "manual"), run: (e, p) => e.authorize(p.ref) },
  "terminal auth start": {
    attempt: "TerminalAuthorizationAttempted",
    async prepare(engine) {
      const { terminal_id } = await engine.registerTerminal({ external_account_id: A, terminal_type: "A_async" });
      const { payment_id } = await engine.createIntent({ external_account_id: A, amount: "10.00", payment_method_types: "card_present", capture_method: "manual" });
      return { ref: { external_account_id: A, payment_id }, client_secret: null, terminal_id };
    },
    run: (e, p) => e.authorize({ ...p.ref, terminal_id: p.terminal_id! }),
  },
  "collected-card auth": { attempt: "AuthorizationAttempted", prepare: collectedOnReader, run: (e, p) => e.processPayment({ client_secret: p.client_secret! }) },
  // a retried collect is refused (the card is collected); processing it again is process-payment's
  "card form collect": { attempt: "AuthorizationAttempted", prepare: (e) => cardForm(e, false), run: collectOnForm },
  capture: { attempt: "CaptureAttempted", prepare: (e) => authorized(e, "manual"), run: (e, p) => e.capture({ ...p.ref, amount: "10.00" }) },
  void: { attempt: "VoidAttempted", prepare: (e) => authorized(e, "manual"), run: (e, p) => e.cancel(p.ref) },
  // a full refund: a retry can only refund what is left
  refund: { attempt: "RefundAttempted", prepare: (e) => authorized(e, "automatic"), run: (e, p) => e.refund(p.ref) },
  "save card": {
    attempt: "CardSaveAttempted",
    async prepare(engine) {
      const p = await cardForm(engine, true);
      await collectOnForm(engine, p);
      return p;
    },
    run: (e, p) => e.saveCard({ ...p.ref, external_customer_id: "cus_saved" }),
  },
};

/** The processors' truth against cardflow's events; what disagrees, listed. */
export async function disagreements(engine: Engine, sims: Pick<Simulators, "ledger">): Promise<string[]> {
  const events = await engine.store.readAll();
  const attempts = new Map<string, { stream: string; type: string; amount?: string }>();
  const outcomes = new Map<string, string>();
  for (const e of events) {
    const data = e.data as { attempt_id?: string; amount?: string };
    if (!data.attempt_id) continue;
    if (e.type.endsWith("Attempted")) attempts.set(data.attempt_id, { stream: e.stream, type: e.type, amount: data.amount });
    else if (!outcomes.has(data.attempt_id)) outcomes.set(data.attempt_id, e.type);
  }
  const problems: string[] = [];
  for (const [id, a] of attempts) {
    const outcome = outcomes.get(id);
    const recorded = sims.ledger.get(id);
    if (!outcome) problems.push(`${a.stream}: ${a.type} ${id} has no outcome (stuck)`);
    else if (!recorded && outcome !== "AttemptAbandoned") problems.push(`${id}: ${outcome} recorded, but the processor never received the call`);
    else if (recorded && recorded.call !== "refused" && outcome === "AttemptAbandoned") problems.push(`${id}: abandoned, but the processor did ${recorded.call}`);
  }
  // nothing done at the processor without an attempt in cardflow
  for (const [key, recorded] of sims.ledger.entries()) {
    if (!attempts.has(key)) problems.push(`processor did ${recorded.call} for ${key}, unknown to cardflow`);
  }
  // and the processor moved the amounts cardflow recorded
  problems.push(...(await allAmountMismatches(engine.store, sims.ledger)));
  return problems;
}

/** What the processor did for one payment's attempts, by kind of call (refusals left out). */
export async function effects(engine: Engine, sims: Pick<Simulators, "ledger">, paymentId: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const e of await engine.store.readStream(`payment-${paymentId}`)) {
    if (!e.type.endsWith("Attempted")) continue;
    const recorded = sims.ledger.get((e.data as { attempt_id: string }).attempt_id);
    if (recorded && recorded.call !== "refused") counts[recorded.call] = (counts[recorded.call] ?? 0) + 1;
  }
  return counts;
}
