// Spec §4.7: save the payment's card on file for a customer; §2.3: a customer's cards on file.
import { customerCardKey, customerCardsProjection, type CustomerCardRecord } from "../../../projections/customer-cards.js";
import type { ProjectionRunner } from "../../../projections/runner.js";
import type { Clock } from "../../clock.js";
import { parseInput, SaveCardInput } from "../../inputs.js";
import type { ReadModelStore } from "../../store/port.js";
import { commandClock, type CommandContext } from "../context.js";
import { decideSaveCard } from "../deciders/save-card.js";
import { viewOf } from "../streams/payment-streams.js";
import type { Pipeline } from "./pipeline.js";

interface Deps {
  pipeline: Pipeline;
  readModels: Pick<ReadModelStore, "get">;
  projections: Pick<ProjectionRunner, "catchUp">;
  clock: Clock;
}

export function saveCardHandler({ pipeline, readModels, projections, clock }: Deps) {
  return async (raw: unknown, ctx: CommandContext = {}): Promise<CustomerCardRecord> => {
    const input = parseInput(SaveCardInput, raw);
    ctx = commandClock(clock, ctx);
    const loaded = await pipeline.onPayment(input.external_account_id, input.payment_id, (loaded) => pipeline.run(loaded, { command: "save_card", decide: decideSaveCard }, input, ctx));
    const { intent, saved_card } = viewOf(loaded);
    const key = customerCardKey(intent.external_account_id, saved_card!.external_customer_id, saved_card!.payment_method_id);
    // Our append is committed, but a store may show it in the global order only once older
    // transactions end (PostgreSQL): look again after 1 ms, doubling, rather than answer without it.
    for (let wait = 1; ; wait *= 2) {
      await projections.catchUp();
      const card = await readModels.get<CustomerCardRecord>(customerCardsProjection.name, key);
      if (card || wait > 2_000) return card!;
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  };
}
