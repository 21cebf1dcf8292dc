// The console's Terminals page rendered in Node (test/support/dom.ts, no browser), signed in as
// the console signs in (GET /v2/account through the typed client) against the real server over
// fastify's inject: the sandbox's "present a test card" form is offered only when the service
// runs the sandbox; in production the endpoint it posts to is not served.
import type { FastifyInstance } from "fastify";
import { render } from "preact";
import { afterEach, describe, expect, it } from "vitest";
import { createApiKeys } from "../../src/api-keys.js";
import { ApiError, createClient } from "../../src/client/index.js";
import { manualClock } from "../../src/clock.js";
import { TerminalsPage } from "../../src/console/app/resources.js";
import { html } from "../../src/console/app/ui.js";
import { createEngine } from "../../src/engine.js";
import { createServer } from "../../src/http/server.js";
import { sequentialIds } from "../../src/ids.js";
import { createSimulators } from "../../src/processors/simulator.js";
import { createMemoryStore } from "../../src/store/memory/index.js";
import { elements, installDom, textOf } from "../support/dom.js";

/** fetch over the server's inject: no port. */
const injected =
  (app: FastifyInstance): typeof fetch =>
  async (input, init = {}) => {
    const url = new URL(String(input));
    const res = await app.inject({ method: (init.method ?? "GET") as "GET", url: url.pathname + url.search, headers: Object.fromEntries(new Headers(init.headers)), ...(init.body ? { payload: String(init.body) } : {}) });
    return new Response(new Uint8Array(res.rawPayload), { status: res.statusCode, headers: res.headers as Record<string, string> });
  };

const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0)) await close();
});

/** A server in the sandbox (its simulators' /sim/* served) or in production (not), an account with a terminal, and the console's session on it. */
async function signedIn(sandbox: boolean) {
  const clock = manualClock();
  const ids = sequentialIds();
  const simulators = createSimulators({ clock, ids });
  const engine = createEngine({ store: createMemoryStore(), clock, ids, processors: simulators });
  const app = createServer({ engine, ...(sandbox ? { simulators } : {}) });
  closing.push(async () => (await app.close(), await engine.close()));
  await engine.openAccount({ external_account_id: "acct_t", processor: "A", currency: "USD" });
  const { key } = await createApiKeys(engine).issue("acct_t", "test");
  const client = createClient({ baseUrl: "http://console.test", apiKey: key, fetch: injected(app), maxRetries: 0 });
  await client.registerTerminal({ external_account_id: "acct_t", terminal_type: "A_async" });
  // as the console's signIn: the session is the client and its account
  return { client, account: await client.account() };
}

/** The Terminals page once its list has loaded. */
async function terminalsPage(session: Awaited<ReturnType<typeof signedIn>>) {
  const root = installDom();
  render(html`<${TerminalsPage} session=${session} onUnauthorized=${() => undefined} />`, root as never);
  closing.push(async () => render(null, root as never));
  await expect.poll(() => textOf(root), { timeout: 10_000, interval: 10 }).toContain("1 terminal");
  return root;
}

describe("the console's Terminals page", () => {
  it("in the sandbox offers the test card form", async () => {
    const session = await signedIn(true);
    expect(session.account.sandbox).toBe(true);
    const page = await terminalsPage(session);
    expect(textOf(page)).toContain("Sandbox: present a test card");
    expect(elements(page, "button").map(textOf)).toEqual(["Register", "Present card"]);
  });

  it("in production does not: the endpoint it would post to is not served there", async () => {
    const session = await signedIn(false);
    expect(session.account.sandbox).toBe(false);
    const page = await terminalsPage(session);
    expect(textOf(page)).toContain("Register a terminal");
    expect(textOf(page)).not.toContain("present a test card");
    expect(elements(page, "button").map(textOf)).toEqual(["Register"]);
    const terminal = (await session.client.listTerminals({ external_account_id: "acct_t" })).data[0]!.terminal_id;
    const refused = await session.client.sandbox.presentCard({ external_account_id: "acct_t", terminal_id: terminal, card_number: "4242424242424242" }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({ status: 404, code: "route_not_found" });
  });
});
