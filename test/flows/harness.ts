// A test rig for the flows of spec §4.8: the engine with the processor simulators in the loop, a
// manual clock (simulated time moves only when a test advances it) and sequential ids.
import { expect } from "vitest";
import type { TerminalType } from "../../machines/events.js";
import type { PaymentRecord } from "../../src/present/payment-record.js";
import { audit } from "../../src/audit/audit.js";
import { createReaderSdk } from "../../src/client-sdk.js";
import { manualClock } from "../../src/clock.js";
import { createEngine, type EngineOptions } from "../../src/engine.js";
import { sequentialIds } from "../../src/ids.js";
import { createSimulators, type SimulatorOptions } from "../../src/processors/simulator.js";

export const A = "acct_a"; // processor A account
export const B = "acct_b"; // processor B account

type Intent = {
  amount?: string;
  payment_method_types?: "card_present" | "card";
  capture_method: "automatic" | "manual";
  payment_method_id?: string;
  external_customer_id?: string;
  allow_saving_card?: boolean;
};

export async function rig(options: { simulators?: Partial<SimulatorOptions>; engine?: Partial<EngineOptions> } = {}) {
  const clock = manualClock();
  const ids = sequentialIds();
  const sims = createSimulators({ clock, ids, ...options.simulators });
  const engine = createEngine({ clock, ids, processors: sims, ...options.engine });
  await engine.openAccount({ external_account_id: A, processor: "A" });
  await engine.openAccount({ external_account_id: B, processor: "B" });
  const sdk = createReaderSdk(engine);

  const terminal = async (terminal_type: TerminalType, account = terminal_type === "B_reader" ? B : A) =>
    (await engine.registerTerminal({ external_account_id: account, terminal_type })).terminal_id;

  const intent = (account: string, fields: Intent) =>
    engine.createIntent({ external_account_id: account, amount: "10.00", payment_method_types: "card_present", ...fields });

  const get = (account: string, payment_id: string) => engine.getPayment({ external_account_id: account, payment_id });

  /**
   * Polls the status read as spec §8 suggests (every second, giving up after 3 minutes) until a
   * status the caller stops at (spec §3): `requires_capture` only with manual capture. Returns
   * the distinct statuses seen, in order, and the last record.
   */
  async function poll(account: string, payment_id: string, between: () => Promise<void> = async () => undefined) {
    const seen: string[] = [];
    for (let second = 0; second <= 180; second++) {
      const record = await get(account, payment_id);
      if (seen.at(-1) !== record.status) seen.push(record.status);
      const keepPolling = record.status === "payment_method_requested" || (record.status === "requires_capture" && record.capture_method === "automatic");
      if (!keepPolling) return { seen, record };
      await between();
      await clock.advance(1_000);
    }
    throw new Error(`gave up polling ${payment_id} after 3 minutes; seen ${seen.join(" -> ")}`);
  }

  /** The statuses the payment went through, from its event stream (the audit timeline). */
  async function statusPath(payment_id: string): Promise<string[]> {
    const { timeline } = await audit({ store: engine.store }, payment_id);
    // attempts keep the status: each status once, in order
    return timeline.map((e) => e.status_after).filter((status, i, all) => i === 0 || status !== all[i - 1]);
  }

  return { clock, ids, sims, engine, sdk, terminal, intent, get, poll, statusPath };
}

/** The §2.1 failure fields of a record, for one-line assertions. */
export const failureOf = (r: PaymentRecord) => ({ status: r.status, last_error: r.last_error, last_error_code: r.last_error_code });

/** Awaits a promise that must be refused; returns the error. */
export async function refused(promise: Promise<unknown>): Promise<Error & { code?: string; status?: number; param?: string | null }> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, "expected a refusal").toBeInstanceOf(Error);
  return error as Error & { code?: string; status?: number };
}
