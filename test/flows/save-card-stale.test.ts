// Saving the card of a stored-card charge decided on this process's cached state, which another
// process has moved on since (its refund's call was in flight when this process last read the
// payment, and is answered now): the refusal is checked again on the payment as it stands, as every
// refusal decided on cached state is, not answered 409 attempt_in_flight from the stale state
// (the chaos run on PostgreSQL found this: c:stale_read).
import { expect, test } from "vitest";
import { createEngine } from "../../src/engine.js";
import type { Processors } from "../../src/processors/port.js";
import { A, rig } from "./harness.js";

/** The processors with every refund call held until `release()`; `called` resolves once one is. */
function heldRefunds(processors: Processors) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let called!: () => void;
  const calledOnce = new Promise<void>((resolve) => (called = resolve));
  const held: Processors = {
    ...processors,
    get: (name) => ({ ...processors.get(name), refund: async (request) => (called(), await released, processors.get(name).refund(request)) }),
  };
  return { held, release, called: calledOnce };
}

test("a refusal to save a stored-card charge's card decided on cached state is checked again on the payment as it stands", async () => {
  const r = await rig();
  const { payment_id } = await r.intent(A, { payment_method_types: "card", capture_method: "automatic", payment_method_id: "pm_card_visa", external_customer_id: "cus_1" });
  expect(await r.engine.authorize({ external_account_id: A, payment_id })).toMatchObject({ status: "succeeded" });
  // another process refunds: its call is in flight when this process reads the payment
  const refunds = heldRefunds(r.sims);
  const other = createEngine({ store: r.engine.store, readModels: r.engine.readModels, clock: r.engine.clock, ids: r.engine.ids, processors: refunds.held });
  const refunded = other.refund({ external_account_id: A, payment_id, amount: "1.00" });
  await refunds.called;
  expect((await r.get(A, payment_id)).status).toBe("succeeded"); // cached here with the refund's attempt open
  refunds.release();
  expect(await refunded).toMatchObject({ amount_refunded: "1.00" });

  // pm_card_visa is the sandbox's token, never saved here: on file already, 409 as the payment stands
  const error = await r.engine.saveCard({ external_account_id: A, payment_id, external_customer_id: "cus_1" }).catch((e: unknown) => e);
  expect(error).toMatchObject({ status: 409, code: "payment_intent_unexpected_state", message: expect.stringContaining("it charges the card on file pm_card_visa, which is saved already") });
});
