// Merchant accounts and their terminals: streams of one event that never changes; the lists of
// terminals and of a customer's cards on file (read models).
import { customerCardKey, customerCardsProjection, type CustomerCardRecord } from "../../../projections/customer-cards.js";
import type { ProjectionRunner } from "../../../projections/runner.js";
import { terminalKey, terminalsProjection, type TerminalRecord } from "../../../projections/terminals.js";
import { streams } from "../../../machines/events.js";
import type { Clock } from "../../clock.js";
import { Conflict } from "../../errors.js";
import type { Ids } from "../../ids.js";
import { AccountIds, CustomerIds, OpenAccountInput, type OpenAccountRequest, parseInput, RegisterTerminalInput, type RegisterTerminalRequest } from "../../inputs.js";
import { WrongExpectedRevision } from "../../store/port.js";
import { commandClock, type CommandContext } from "../context.js";
import { decideOpenAccount, decideRegisterTerminal } from "../deciders/accounts.js";
import type { Account, AccountLookups } from "../lookups/accounts.js";
import type { SingleEventStreams } from "../streams/single-event-streams.js";

interface Deps {
  streamsOfOne: Pick<SingleEventStreams, "startStream">;
  accounts: Pick<AccountLookups, "getAccount">;
  clock: Clock;
  ids: Ids;
}

export function openAccountHandler({ streamsOfOne, clock }: Pick<Deps, "streamsOfOne" | "clock">) {
  return async (raw: OpenAccountRequest, ctx: CommandContext = {}): Promise<Account> => {
    const input = parseInput(OpenAccountInput, raw);
    const decision = decideOpenAccount(input);
    if ("refuse" in decision) throw decision.refuse;
    try {
      await streamsOfOne.startStream(streams.account(input.external_account_id), decision.start, commandClock(clock, ctx));
    } catch (error) {
      if (error instanceof WrongExpectedRevision) throw new Conflict(`merchant account ${input.external_account_id} already exists`, "account_exists");
      throw error;
    }
    const { external_account_id, processor, currency } = input;
    return { external_account_id, processor, currency };
  };
}

export function registerTerminalHandler({ streamsOfOne, accounts, clock, ids }: Deps) {
  return async (raw: RegisterTerminalRequest, ctx: CommandContext = {}): Promise<TerminalRecord> => {
    const input = parseInput(RegisterTerminalInput, raw);
    await accounts.getAccount(input.external_account_id);
    ctx = commandClock(clock, ctx);
    const terminal_id = ids.id("tmr");
    const { start } = decideRegisterTerminal(input, { terminal_id, now: ctx.now! });
    const { registered_at, ...terminal } = start.data as TerminalRecord & { registered_at: string };
    const record: TerminalRecord = { ...terminal, date_created: registered_at };
    await streamsOfOne.startStream(streams.terminal(terminal_id), start, ctx, ctx.idempotency?.(record));
    return record;
  };
}

interface ListDeps {
  accounts: Pick<AccountLookups, "getAccount">;
  projections: Pick<ProjectionRunner, "fresh">;
}

export function listTerminalsHandler({ accounts, projections }: ListDeps) {
  return async (accountId: string): Promise<TerminalRecord[]> => {
    parseInput(AccountIds, { external_account_id: accountId });
    await accounts.getAccount(accountId);
    // every terminal registered before the request (bounded wait: ReadModelBehind)
    // the key's prefix holds another account's too when that one's id is this one's and a "/" more
    return (await projections.fresh.list<TerminalRecord>(terminalsProjection.name, terminalKey(accountId, ""))).filter((t) => t.external_account_id === accountId);
  };
}

export function listCustomerCardsHandler({ accounts, projections }: ListDeps) {
  return async (accountId: string, customerId: string): Promise<CustomerCardRecord[]> => {
    parseInput(CustomerIds, { external_account_id: accountId, external_customer_id: customerId });
    await accounts.getAccount(accountId);
    // every card saved before the request (bounded wait: ReadModelBehind)
    // the key's prefix holds other ids too ("acct" + "x/c" is "acct/x" + "c"): the card's own fields decide
    return (await projections.fresh.list<CustomerCardRecord>(customerCardsProjection.name, customerCardKey(accountId, customerId))).filter((c) => c.external_account_id === accountId && c.external_customer_id === customerId);
  };
}

/** The account commands and lists, over their dependencies. */
export const accountHandlers = (deps: Deps & ListDeps) => ({
  openAccount: openAccountHandler(deps),
  registerTerminal: registerTerminalHandler(deps),
  listTerminals: listTerminalsHandler(deps),
  listCustomerCards: listCustomerCardsHandler(deps),
});
