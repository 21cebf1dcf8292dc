// A call that records nothing (a terminal told to stop collecting) whose processor does not answer
// is asked once per command: its 503 is not a refusal decided on this process's cached state, to
// be checked again on fresh state (that made a cancel wait for the unanswering processor twice).
import { expect, it } from "vitest";
import { manualClock } from "../../src/clock.js";
import { createEngine } from "../../src/engine.js";
import { sequentialIds } from "../../src/ids.js";
import { createSimulators } from "../../src/processors/simulator.js";
import { withReplacedCalls } from "./replaced-calls.js";

it("a cancel whose terminal stop is not answered asks the processor once and answers 503", async () => {
  const clock = manualClock();
  const ids = sequentialIds();
  const simulators = createSimulators({ clock, ids });
  let stops = 0;
  let answering = true;
  const processors = withReplacedCalls(simulators, (_, port) => ({
    cancelTerminalAuthorization: async (args) => {
      stops++;
      if (!answering) throw new Error("connect ETIMEDOUT");
      return port.cancelTerminalAuthorization(args);
    },
  }));
  const engine = createEngine({ clock, ids, processors });
  await engine.openAccount({ external_account_id: "acct_t", processor: "A" });
  const { terminal_id } = await engine.registerTerminal({ external_account_id: "acct_t", terminal_type: "A_async" });
  const { payment_id } = (await engine.createIntent({ external_account_id: "acct_t", amount: "5.00", payment_method_types: "card_present", capture_method: "manual" })) as { payment_id: string };
  expect(await engine.authorize({ external_account_id: "acct_t", payment_id, terminal_id })).toMatchObject({ status: "payment_method_requested" });
  answering = false;
  await expect(engine.cancel({ external_account_id: "acct_t", payment_id })).rejects.toMatchObject({ code: "processor_unavailable" });
  expect(stops).toBe(1);
  answering = true;
  expect(await engine.cancel({ external_account_id: "acct_t", payment_id })).toMatchObject({ status: "canceled" });
  await engine.close();
});
