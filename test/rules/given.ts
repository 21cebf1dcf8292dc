// Givens of the rule tests: the engine with a processor whose answers the test writes (so a rule
// is tried with exactly the amounts it is about, without the simulators' own rules in between),
// and the payment it acts on. Rules are checked through the engine's public API only.
import { expect } from "vitest";
import type { Authorization } from "../../machines/events.js";
import { manualClock } from "../../src/clock.js";
import { createEngine } from "../../src/engine.js";
import { sequentialIds } from "../../src/ids.js";
import { refused } from "../flows/harness.js";
import { scriptedProcessors, TEST_CARD } from "../support/scripted-processor.js";

export const ACCOUNT = "acct_rules";

export async function givenAnEngine() {
  const processors = scriptedProcessors();
  const engine = createEngine({ clock: manualClock(), ids: sequentialIds(), processors });
  await engine.openAccount({ external_account_id: ACCOUNT, processor: "A" });
  const terminal_id = (await engine.registerTerminal({ external_account_id: ACCOUNT, terminal_type: "A_async" })).terminal_id;
  const get = (payment_id: string) => engine.getPayment({ external_account_id: ACCOUNT, payment_id });

  /** A stored-card intent (spec §4.8 "Stored-card charge") for `amount`, not yet authorized. */
  const storedCardIntent = async (capture_method: "manual" | "automatic", amount = "10.00") =>
    (await engine.createIntent({ external_account_id: ACCOUNT, amount, payment_method_types: "card", capture_method, payment_method_id: "pm_card_visa", external_customer_id: "cus_rules" })).payment_id;

  /** A card-present intent whose asynchronous terminal is collecting the card (payment_method_requested). */
  const collectingOnTerminal = async (capture_method: "manual" | "automatic", amount = "10.00") => {
    const { payment_id } = await engine.createIntent({ external_account_id: ACCOUNT, amount, payment_method_types: "card_present", capture_method });
    await engine.authorize({ external_account_id: ACCOUNT, payment_id, terminal_id });
    return payment_id;
  };

  /** A stored-card payment authorized for `amount` with manual capture (requires_capture). */
  const authorized = async (amount = "10.00") => {
    const payment_id = await storedCardIntent("manual", amount);
    processors.nextAuthorization = { kind: "authorized", authorization: authorization(amount) };
    await engine.authorize({ external_account_id: ACCOUNT, payment_id });
    return payment_id;
  };

  /** A stored-card payment authorized and captured in full for `amount` (succeeded). */
  const captured = async (amount = "10.00") => {
    const payment_id = await authorized(amount);
    await engine.capture({ external_account_id: ACCOUNT, payment_id, amount });
    return payment_id;
  };

  return { engine, processors, get, storedCardIntent, collectingOnTerminal, authorized, captured };
}

/** What a processor reports when it authorizes `amount_authorized`, with its tip and donation. */
export function authorization(amount_authorized: string, tip_amount = "0.00", donation_amount = "0.00"): Authorization {
  return {
    amount_authorized,
    tip_amount,
    donation_amount,
    authorization_code: "RULE01",
    card: TEST_CARD,
    avs_response_code: 0,
    avs_response_message: "Address and postal code match",
  };
}

/** Awaits a command the engine must refuse as not allowed in the payment's state (HTTP 409). */
export async function refusedAsUnexpectedState(promise: Promise<unknown>) {
  expect(await refused(promise)).toMatchObject({ status: 409, code: "payment_intent_unexpected_state" });
}
