// Merchant accounts and their terminals, as commands look them up (single-event streams).
import { streams } from "../../../machines/events.js";
import type { TerminalRecord } from "../../../projections/terminals.js";
import { NotFound } from "../../errors.js";
import type { SingleEventStreams } from "../streams/single-event-streams.js";

export interface Account {
  external_account_id: string;
  processor: "A" | "B";
  currency: string;
}

export function createAccountLookups(streamsOfOne: Pick<SingleEventStreams, "firstEvent">) {
  async function getAccount(accountId: string): Promise<Account> {
    const opened = await streamsOfOne.firstEvent(streams.account(accountId));
    if (!opened) throw new NotFound("merchant account", accountId, "external_account_id");
    return opened.data as Account;
  }

  /** The account's terminal; another account's reads as missing. */
  async function getTerminal(accountId: string, terminalId: string): Promise<TerminalRecord> {
    const registered = await streamsOfOne.firstEvent(streams.terminal(terminalId));
    const data = registered?.data as (TerminalRecord & { registered_at: string }) | undefined;
    if (!data || data.external_account_id !== accountId) throw new NotFound("terminal", terminalId, "terminal_id");
    return data;
  }

  return { getAccount, getTerminal };
}

export type AccountLookups = ReturnType<typeof createAccountLookups>;
