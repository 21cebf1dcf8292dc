// Spec §4.4: authorize. The asynchronous terminal answers at once; the synchronous one blocks until
// the outcome (the shopper pays or cancels), up to 120 s, then the terminal is stopped.
import type { TerminalType } from "../../../machines/events.js";
import { hasTag } from "../../../machines/fold.js";
import type { Clock } from "../../clock.js";
import { AuthorizeInput, type AuthorizeRequest, parseInput } from "../../inputs.js";
import { commandClock, type CommandContext } from "../context.js";
import { decideAuthorize, decideShopperTimeout } from "../deciders/authorize.js";
import type { AccountLookups } from "../lookups/accounts.js";
import { followUpDue } from "../policy/follow-ups.js";
import type { Loaded, PaymentStreams } from "../streams/payment-streams.js";
import type { Pipeline } from "./pipeline.js";

interface Deps {
  pipeline: Pipeline;
  payments: Pick<PaymentStreams, "waitWhileCollecting" | "collectingSince" | "loadOwned">;
  accounts: Pick<AccountLookups, "getTerminal">;
  clock: Clock;
  /** How long a synchronous-terminal auth blocks before the engine gives up (spec §8: 120 s). */
  syncAuthTimeoutMs: number;
}

export function authorizeHandler({ pipeline, payments, accounts, clock, syncAuthTimeoutMs }: Deps) {
  return async (raw: AuthorizeRequest, ctx: CommandContext = {}): Promise<Loaded> => {
    const input = parseInput(AuthorizeInput, raw);
    ctx = commandClock(clock, ctx);
    const { external_account_id, payment_id } = input;
    // the terminal a terminal authorization starts on, once decided
    let started: TerminalType | null = null;
    // a synchronous terminal's answer is the payment after the wait (saved when the command ends),
    // never the collection it started: a request cut off meanwhile leaves no answer to replay
    const answered = ctx.idempotency;
    if (answered) ctx = { ...ctx, idempotency: (answer) => (started === "A_sync" ? undefined : answered(answer)) };
    // a retry answered with its earlier try's outcome (the wait it did, or the reconciler's
    // USER_TIMEOUT) has nothing to wait for: that outcome is its answer, not the payment now
    let fromStore = false;
    const told = ctx.answeredFromStore;
    ctx = { ...ctx, answeredFromStore: () => ((fromStore = true), told?.()) };
    const loaded = await pipeline.onPayment(external_account_id, payment_id, (loaded) =>
      pipeline.run(
        loaded,
        {
          command: "authorize",
          decide: (i: AuthorizeInput, payment, context) => {
            const decision = decideAuthorize(i, payment, context);
            started = "attempt" in decision && decision.terminal ? decision.terminal.terminal_type : null;
            return decision;
          },
          gather: async () => ({ terminal: await accounts.getTerminal(external_account_id, input.terminal_id!) }),
        },
        input,
        ctx,
        { followUps: true },
      ),
    );
    // a retry of a blocking auth whose first try was cut off while its shopper had yet to pay (a
    // stop answered it 503 service_stopping; a crash's lease ran out) finds the collection still
    // running: it waits for the outcome as that try would have, not answering the collection's start
    const resumed = fromStore && loaded.snapshot.context.terminal?.terminal_type === "A_sync" && hasTag(loaded.snapshot, "collecting_card");
    if ((started !== "A_sync" || fromStore) && !resumed) return loaded;
    // a resumed wait has what is left of the limit since the collection began, as the first try had
    const began = resumed ? await payments.collectingSince(payment_id) : null;
    const waitMs = began === null ? syncAuthTimeoutMs : Math.max(0, syncAuthTimeoutMs - (clock.now() - began));
    // seen from the store (card presented through another process): final once no processor call
    // is in flight and what follows on its own has happened, or nothing moved for a look
    const collected = await payments.waitWhileCollecting(payment_id, waitMs, (current, quiet) => current.snapshot.context.attempt === null && (quiet || !followUpDue(current.snapshot)));
    if (!collected) {
      await pipeline.onPayment(external_account_id, payment_id, (current) =>
        pipeline.run(current, { command: "authorize", decide: decideShopperTimeout }, input, commandClock(clock, { ...ctx, now: undefined, actor: "processor:A" })),
      );
    }
    const final = await payments.loadOwned(external_account_id, payment_id);
    // the payment as the terminal left it (its last event a processor's report), answered as this command's
    return ctx.request_id === undefined ? final : { ...final, request_id: ctx.request_id };
  };
}
