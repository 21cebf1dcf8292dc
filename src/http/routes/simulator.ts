// Extensions for the sandbox: what a shopper and a clerk do on a simulated processor A terminal
// (served only with the simulators; the client SDK's routes are ./client-sdk.ts).
import { z } from "zod";
import type { Engine } from "../../engine.js";
import { InvalidRequest, TransitionNotAllowed } from "../../errors.js";
import { AmountInput, Id } from "../../inputs.js";
import type { Simulators } from "../../processors/simulator.js";
import { notCollecting } from "../../processors/simulator/terminal-sessions.js";
import { testCard } from "../../processors/test-cards.js";
import { presentPayment } from "../../present/api-versions.js";
import { defineRoute } from "../route.js";
import { PaymentRecordOut } from "../schemas.js";

const TerminalRef = { external_account_id: Id, terminal_id: Id };

export const PresentCardInput = z.strictObject({
  ...TerminalRef,
  /** A sandbox test card number (docs/test-cards.md); default 4242 4242 4242 4242. */
  card_number: z.string().regex(/^\d{12,19}$/, "12 to 19 digits").refine((n) => testCard(n) !== undefined, "not a test card of the simulator").optional(),
  /** Automatic capture: captured separately (default), on the terminal, or capture requested. */
  capture: z.enum(["separately", "on_terminal", "requested"]).optional(),
  /** A tip the shopper adds on the terminal: an amount as every amount is (src/money.ts checks it). */
  tip: AmountInput.optional(),
});
export const ClerkCancelInput = z.strictObject(TerminalRef);

export function simulatorRoutes(engine: Engine, simulators: Simulators) {
  /** The payment this account's terminal is collecting for (404 for another account's terminal). */
  async function collecting(account: string, terminalId: string): Promise<string> {
    // its own stream: no wait for the read models (a terminal registered just before is there)
    const { terminal_type } = await engine.getTerminal(account, terminalId);
    if (terminal_type === "B_reader") {
      throw new InvalidRequest(`terminal_id: ${terminalId} is a processor B reader; its card is collected by the client SDK with the intent's client secret (POST /v2/sdk/payment-method), these helpers act on processor A terminals`, "terminal_id", "terminal_collects_with_client_sdk");
    }
    const paymentId = simulators.terminal.collecting(terminalId);
    if (!paymentId) throw notCollecting(terminalId);
    return paymentId;
  }
  return [
    defineRoute({
      method: "POST",
      path: "/sim/terminal/present-card",
      summary: "Simulator: the shopper presents a test card on a processor A terminal",
      description: "The terminal reports the outcome the test card selects; answers with the payment after it.",
      extension: true,
      auth: "api_key",
      input: PresentCardInput,
      response: () => PaymentRecordOut("v2"),
      async run({ external_account_id, terminal_id, card_number, capture, tip }) {
        const payment_id = await collecting(external_account_id, terminal_id);
        await simulators.terminal.presentCard(terminal_id, card_number, { ...(capture ? { capture } : {}), ...(tip !== undefined ? { tip } : {}) }).catch((error: unknown) => {
          // the card was presented; a report the payment no longer awaits (canceled meanwhile
          // through another request or process) is not this request's failure: the payment is the answer
          if (!(error instanceof TransitionNotAllowed)) throw error;
        });
        return engine.getPayment({ external_account_id, payment_id });
      },
      present: presentPayment,
    }),
    defineRoute({
      method: "POST",
      path: "/sim/terminal/clerk-cancel",
      summary: "Simulator: the clerk cancels the collection on a processor A terminal (POS_CANCEL)",
      extension: true,
      auth: "api_key",
      input: ClerkCancelInput,
      response: () => PaymentRecordOut("v2"),
      async run({ external_account_id, terminal_id }) {
        const payment_id = await collecting(external_account_id, terminal_id);
        await simulators.terminal.clerkCancel(terminal_id);
        return engine.getPayment({ external_account_id, payment_id });
      },
      present: presentPayment,
    }),
  ];
}
