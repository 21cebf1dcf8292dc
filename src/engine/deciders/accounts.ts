// Merchant accounts and their terminals: streams of one event that never changes.
import type { DomainEvent } from "../../../machines/events.js";
import { InvalidRequest, type CardflowError } from "../../errors.js";
import type { OpenAccountInput, RegisterTerminalInput } from "../../inputs.js";
import { isCurrency } from "../../money.js";

export function decideOpenAccount(input: OpenAccountInput): { refuse: CardflowError } | { start: DomainEvent } {
  const { external_account_id, processor, currency } = input;
  if (!isCurrency(currency)) return { refuse: new InvalidRequest(`currency: ${currency} is not an ISO 4217 currency with minor units (metals, SDR and accounting units are not charged on cards)`, "currency", "parameter_invalid") };
  return { start: { type: "AccountOpened", version: 1, data: { external_account_id, processor, currency } } };
}

/** A terminal of the (existing) account, registered under a new id at the command's time. */
export function decideRegisterTerminal(input: RegisterTerminalInput, { terminal_id, now }: { terminal_id: string; now: string }): { start: DomainEvent } {
  const { external_account_id, terminal_type, label = null, serial_number = null } = input;
  return { start: { type: "TerminalRegistered", version: 1, data: { terminal_id, external_account_id, terminal_type, label, serial_number, registered_at: now } } };
}
