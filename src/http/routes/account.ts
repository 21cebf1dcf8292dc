// Which merchant account an API key belongs to (extension): how a console or a tool signs in
// with a key alone, and a cheap way to check that a key is valid.
import { z } from "zod";
import type { Engine } from "../../engine.js";
import { Id } from "../../inputs.js";
import { defineRoute } from "../route.js";

export const AccountOut = z.strictObject({ external_account_id: z.string(), processor: z.enum(["A", "B"]), currency: z.string(), key_id: z.string(), sandbox: z.boolean() }).meta({ title: "Account" });

/** `sandbox`: the simulators' helpers (/sim/*) are served; a console offers them only then. */
export function accountRoutes(engine: Engine, sandbox: boolean) {
  return [
    defineRoute({
      method: "GET",
      path: "/account",
      versions: ["v2"],
      summary: "The merchant account of the API key",
      description: "401 when the key is not valid. `external_account_id` may be sent as in every call (spec §1): another account's is 403. `sandbox`: whether the service runs the sandbox (simulated processors, test cards, the `/sim/*` helpers) or production.",
      extension: true,
      auth: "api_key",
      input: z.strictObject({ external_account_id: Id.optional() }),
      response: () => AccountOut,
      async run(_input, { account, command }) {
        const { external_account_id, processor, currency } = await engine.getAccount(account!);
        return { external_account_id, processor, currency, key_id: String(command.actor), sandbox };
      },
      present: (answer) => answer,
    }),
  ];
}
