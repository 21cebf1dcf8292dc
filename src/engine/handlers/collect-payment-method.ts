// Processor B client SDK: collect the card of the client secret's intent. Where the spec's flow has
// no process step (§4.8: card not present, and a reader with automatic capture: collect, then save
// the card) the collect also processes the payment, in the same command.
import type { Clock } from "../../clock.js";
import { CollectPaymentMethodInput, type CollectPaymentMethodRequest, parseInput } from "../../inputs.js";
import { checkedAnswer } from "../../processors/answers.js";
import type { Processors } from "../../processors/port.js";
import { commandClock, type CommandContext } from "../context.js";
import { collectProcesses } from "../../../machines/client-sdk.js";
import { Card } from "../../../machines/events.js";
import { authorizeCollectedCard } from "../deciders/client-sdk.js";
import { decideCollect } from "../deciders/collect-payment-method.js";
import type { AccountLookups } from "../lookups/accounts.js";
import { viewOf, type Loaded } from "../streams/payment-streams.js";
import type { Pipeline } from "./pipeline.js";
import { withoutAttempt } from "./processor-calls.js";

interface Deps {
  pipeline: Pipeline;
  accounts: Pick<AccountLookups, "getTerminal">;
  processors: Processors;
  clock: Clock;
}

export function collectPaymentMethodHandler({ pipeline, accounts, processors, clock }: Deps) {
  return async (raw: CollectPaymentMethodRequest, ctx: CommandContext = {}): Promise<Loaded> => {
    const input = parseInput(CollectPaymentMethodInput, raw);
    const { card_number = "4242424242424242" } = input;
    ctx = commandClock(clock, ctx);
    return pipeline.onPaymentOfSecret(input.client_secret, async (loaded) => {
      const { intent } = viewOf(loaded);
      const collect = {
        command: "collect_payment_method",
        decide: decideCollect,
        gather: async (need: "terminal" | "card", current: Loaded) =>
          need === "terminal"
            ? { terminal: await accounts.getTerminal(intent.external_account_id, input.terminal_id!) }
            : { card: await withoutAttempt("B", "readCardFromClient", () => processors.get("B").readCardFromClient({ payment: viewOf(current), card_number }).then((card) => checkedAnswer(Card, card, "B", "readCardFromClient"))) },
      };
      if (!collectProcesses(intent)) return pipeline.run(loaded, collect, input, ctx);
      // the card collected and the authorization attempted in one append (pipeline.runBoth)
      return pipeline.runBoth(loaded, collect, input, { command: "authorize", decide: (_: unknown, payment) => authorizeCollectedCard(payment) }, input, ctx, { followUps: true });
    });
  };
}
