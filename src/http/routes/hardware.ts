// Terminals (hardware) of a merchant account (spec §2.2, §4.1, §4.2).
import { z } from "zod";
import type { Engine } from "../../engine.js";
import { Id, RegisterTerminalInput } from "../../inputs.js";
import type { TerminalRecord } from "../../../projections/terminals.js";
import { defineRoute } from "../route.js";
import { TerminalListOut, TerminalOut } from "../schemas.js";

export const ListTerminalsInput = z.strictObject({ external_account_id: Id });

export function hardwareRoutes(engine: Engine) {
  return [
    defineRoute({
      method: "POST",
      path: "/hardware",
      versions: ["v2"],
      summary: "Register a terminal (spec §4.1)",
      description: "`terminal_type`: `A_async` (processor A asynchronous), `A_sync` (processor A synchronous) or `B_reader` (processor B reader, collected by the client SDK). Keep the returned `terminal_id`.",
      auth: "api_key",
      input: RegisterTerminalInput,
      response: () => TerminalOut,
      run: (input, { command }) => engine.registerTerminal(input, command),
      present: (terminal: TerminalRecord) => terminal,
    }),
    defineRoute({
      method: "GET",
      path: "/hardware",
      versions: ["v2"],
      summary: "List the terminals of the merchant account (spec §4.2)",
      auth: "api_key",
      input: ListTerminalsInput,
      response: () => TerminalListOut,
      run: (input) => engine.listTerminals(input.external_account_id),
      present: (data: TerminalRecord[]) => ({ data }),
    }),
  ];
}
