// Spec §4.4: authorize. A stored card is charged; a processor A terminal starts collecting (the
// asynchronous type answers at once, the synchronous one blocks until the outcome, up to 120 s);
// a card the processor B client SDK collected is processed.
import type { TerminalType } from "../../../machines/events.js";
import { hasTag } from "../../../machines/fold.js";
import type { PaymentRecord } from "../../present/payment-record.js";
import { InvalidRequest } from "../../errors.js";
import { AuthorizeInput, parseInput } from "../../inputs.js";
import { attempt } from "../attempt.js";
import type { Core } from "../core.js";
import { commandClock, type CommandContext, type Loaded } from "../payment-streams.js";
import { ALREADY_PROCESSED, collectedByClientSdk, processCollected, processedByCollect } from "./process-payment.js";
import { followUpsDue } from "../follow-up.js";
import { shopperTimedOut } from "../outcomes.js";

export function authorize(core: Core) {
  const { viewOf, processorOf, payments } = core;

  /** Card not present: charge the card on file (automatic capture captures in the same step). */
  const chargeStoredCard = (paymentId: string, loaded: Loaded, ctx: CommandContext) =>
    attempt(core, paymentId, loaded, {
      attempt: (attempt_id) => ({ type: "AuthorizationAttempted", version: 1, data: { attempt_id, amount: viewOf(loaded).intent.amount } }),
      call: async (key) => ({ call: "authorize", outcome: await processorOf(loaded).chargeStoredCard({ payment: viewOf(loaded), key }) }),
    }, ctx, "authorize");

  return async (input: unknown, ctx: CommandContext = {}): Promise<PaymentRecord> => {
    const req = parseInput(AuthorizeInput, input);
    ctx = commandClock(core.clock, ctx);
    let terminalType: TerminalType | null = null;
    const loaded = await payments.onPayment(req.external_account_id, req.payment_id, async (loaded) => {
      const payment = viewOf(loaded);
      if (payment.intent.payment_method_id !== null) {
        if (req.terminal_id !== undefined) throw new InvalidRequest("terminal_id is not sent for a stored-card charge", "terminal_id", "parameter_unexpected");
        core.requireAllowed(loaded, "authorize");
        return chargeStoredCard(req.payment_id, loaded, ctx);
      }
      if (collectedByClientSdk(loaded)) return processCollected(core, req.payment_id, loaded, ctx);
      if (payment.intent.payment_method_types !== "card_present") {
        core.refuse(loaded, "authorize", processedByCollect(loaded) ? ALREADY_PROCESSED : "a card not present is charged from a card on file, or collected by the processor B client SDK first");
      }
      if (req.terminal_id === undefined) throw new InvalidRequest("terminal_id: required to authorize a card-present payment", "terminal_id", "parameter_missing");
      const terminal = await core.getTerminal(req.external_account_id, req.terminal_id);
      if (terminal.terminal_type === "B_reader") {
        throw new InvalidRequest(`terminal_id: ${terminal.terminal_id} is a processor B reader; its card is collected by the client SDK with the intent's client secret`, "terminal_id", "terminal_collects_with_client_sdk");
      }
      // refused before the terminal is asked: a second auth must not disturb a collection in progress
      core.requireAllowed(loaded, "authorize", "a terminal authorization is allowed from requires_payment_method or error");
      terminalType = terminal.terminal_type;
      const { terminal_id, terminal_type } = terminal;
      return attempt(core, req.payment_id, loaded, {
        attempt: (attempt_id) => ({ type: "TerminalAuthorizationAttempted", version: 1, data: { attempt_id, terminal_id, terminal_type } }),
        call: async (key) => (await core.processors.get("A").startTerminalAuthorization({ payment, terminal, key }), { call: "start_terminal", outcome: null }),
      }, ctx, "authorize");
    });
    if (terminalType !== "A_sync") return core.recordOf(loaded);
    // spec §4.4: the synchronous terminal blocks until the shopper pays or cancels, up to 120 s
    // seen from the store (card presented through another process): final once no processor call
    // is in flight and what follows on its own has happened, or nothing moved for a look
    const collected = await payments.waitWhileCollecting(req.payment_id, core.syncAuthTimeoutMs, (loaded, quiet) => {
      const due = followUpsDue(core, loaded);
      return loaded.snapshot.context.attempt === null && (quiet || (!due.capture && !due.saveCard));
    });
    if (!collected) {
      await payments.onPayment(req.external_account_id, req.payment_id, async (current) => {
        if (!hasTag(current.snapshot, "collecting_card")) return current;
        await core.processors.get("A").cancelTerminalAuthorization({ payment: viewOf(current), terminal_id: req.terminal_id! });
        return payments.append(req.payment_id, current, [shopperTimedOut()], commandClock(core.clock, { ...ctx, now: undefined, actor: "processor:A" }), "authorize");
      });
    }
    return core.recordOf(await payments.loadOwned(req.external_account_id, req.payment_id));
  };
}
