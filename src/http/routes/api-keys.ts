// API keys (extension, for the console): a merchant's key lists its own account's keys (never a
// key itself) and revokes one of them; another account's key is not found, as an unknown one.
import { z } from "zod";
import type { ApiKeyInfo, ApiKeys } from "../../api-keys.js";
import { Id } from "../../inputs.js";
import { defineRoute } from "../route.js";

export const ApiKeyOut = z
  .strictObject({
    id: z.string(),
    object: z.literal("api_key"),
    external_account_id: z.string(),
    prefix: z.string().nullable(),
    created: z.iso.datetime({ offset: true }),
    expires_at: z.iso.datetime({ offset: true }).nullable(),
    last_used: z.iso.datetime({ offset: true }).nullable(),
    status: z.enum(["active", "expired", "revoked"]),
    revoked_at: z.iso.datetime({ offset: true }).nullable(),
    replaced_by: z.string().nullable(),
  })
  .meta({ title: "ApiKey" });

/** On the server's own keys (the ones it authenticates with), so a key revoked here is 401 here at once. */
export function apiKeyRoutes(apiKeys: ApiKeys) {
  return [
    defineRoute({
      method: "GET",
      path: "/api_keys",
      versions: ["v2"],
      summary: "List the account's API keys",
      description: "Newest first: id, the key's first characters (`prefix`), `status` (`active`, `expired`, `revoked`), created, last used (recorded at most once a minute), expiry. Never the key itself.",
      extension: true,
      auth: "api_key",
      input: z.strictObject({ external_account_id: Id }),
      response: () => z.strictObject({ data: z.array(ApiKeyOut) }),
      run: (input) => apiKeys.list(input.external_account_id),
      present: (data: ApiKeyInfo[]) => ({ data }),
    }),
    defineRoute({
      method: "DELETE",
      path: "/api_keys/:key_id",
      versions: ["v2"],
      summary: "Revoke one of the account's API keys",
      description: "Every request with it answers 401 from then on: at once in the process that revoked it, in every other process within a second (the key used for this request included, if it is this one). Another account's key is 404.",
      extension: true,
      auth: "api_key",
      input: z.strictObject({ external_account_id: Id, key_id: Id }),
      response: () => ApiKeyOut,
      run: (input, { command }) => apiKeys.revoke(input.key_id, { account: input.external_account_id, actor: String(command.actor) }),
      present: (key: ApiKeyInfo) => key,
    }),
  ];
}
