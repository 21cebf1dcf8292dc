// Merchant accounts and their terminals: streams of one event that never changes.
import { streams, type DomainEvent } from "../../../machines/events.js";
import { terminalKey, terminalsProjection, type TerminalRecord } from "../../../projections/terminals.js";
import { Conflict, InvalidRequest } from "../../errors.js";
import { OpenAccountInput, parseInput, RegisterTerminalInput } from "../../inputs.js";
import { isCurrency } from "../../money.js";
import { WrongExpectedRevision } from "../../store/port.js";
import type { Core } from "../core.js";
import { commandClock, type Account, type CommandContext } from "../payment-streams.js";

export function openAccount(core: Core) {
  return async (input: unknown, ctx: CommandContext = {}): Promise<Account> => {
    const { external_account_id, processor, currency } = parseInput(OpenAccountInput, input);
    if (!isCurrency(currency)) throw new InvalidRequest(`currency: ${currency} is not an ISO 4217 currency`, "currency", "parameter_invalid");
    const event: DomainEvent = { type: "AccountOpened", version: 1, data: { external_account_id, processor, currency } };
    try {
      await core.payments.startStream(streams.account(external_account_id), event, commandClock(core.clock, ctx));
    } catch (error) {
      if (error instanceof WrongExpectedRevision) throw new Conflict(`merchant account ${external_account_id} already exists`, "account_exists");
      throw error;
    }
    return { external_account_id, processor, currency };
  };
}

export function registerTerminal(core: Core) {
  return async (input: unknown, ctx: CommandContext = {}): Promise<TerminalRecord> => {
    const { external_account_id, terminal_type, label = null, serial_number = null } = parseInput(RegisterTerminalInput, input);
    await core.getAccount(external_account_id);
    ctx = commandClock(core.clock, ctx);
    const terminal_id = core.ids.id("tmr");
    const data = { terminal_id, external_account_id, terminal_type, label, serial_number, registered_at: ctx.now! };
    const { registered_at, ...terminal } = data;
    const record: TerminalRecord = { ...terminal, date_created: registered_at };
    await core.payments.startStream(streams.terminal(terminal_id), { type: "TerminalRegistered", version: 1, data }, ctx, ctx.idempotency?.(record));
    return record;
  };
}

export function listTerminals(core: Core) {
  return async (accountId: string): Promise<TerminalRecord[]> => {
    await core.getAccount(accountId);
    // the list reflects every terminal registered before the request (bounded wait: ReadModelBehind)
    await core.projections.caughtUp();
    return core.readModels.list<TerminalRecord>(terminalsProjection.name, terminalKey(accountId, ""));
  };
}
