// Read model: terminals (spec §2.2) per merchant account, keyed `${account}/${terminal_id}`.
import type { z } from "zod";
import type { TerminalRegistered, TerminalType } from "../machines/events.js";
import { defineProjection } from "./projection.js";

export interface TerminalRecord {
  terminal_id: string;
  external_account_id: string;
  terminal_type: TerminalType;
  label: string | null;
  serial_number: string | null;
  date_created: string;
}

export const terminalKey = (accountId: string, terminalId: string) => `${accountId}/${terminalId}`;

type Registered = z.infer<typeof TerminalRegistered>["data"];

export const terminalsProjection = defineProjection<TerminalRecord>({
  name: "terminals",
  keyOf: (e) => (e.type === "TerminalRegistered" ? terminalKey((e.data as Registered).external_account_id, (e.data as Registered).terminal_id) : null),
  apply(_doc, e) {
    const { registered_at, ...terminal } = e.data as Registered;
    return { ...terminal, date_created: registered_at };
  },
});
