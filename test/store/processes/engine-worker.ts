// An engine in its own process, on a durable store, printing one JSON line per acknowledged
// command. "race": capture and refund the given payments (another worker does the same).
// "load": create, authorize, capture and refund new payments until killed.
import { createEngine } from "../../../src/engine.js";
import { CardflowError } from "../../../src/errors.js";
import { scriptedProcessors } from "../../support/scripted-processor.js";
import { ACCOUNT, AUTHORIZED, openDurable, STORED_CARD_INTENT, type Ack, type WorkerSpec } from "./stores.js";

const spec = JSON.parse(process.argv[2]!) as WorkerSpec;
const { events, readModels } = await openDurable(spec.store);
const processors = scriptedProcessors();
processors.nextAuthorization = AUTHORIZED;
const engine = createEngine({ store: events, readModels, processors, liveProjections: spec.liveProjections });
const ack = (a: Ack) => process.stdout.write(`${JSON.stringify(a)}\n`);
let refused = 0;

/** Runs a command; an answer the engine gives on purpose (refused, conflict) is counted, anything else crashes. */
async function attempt(run: () => Promise<unknown>, done: Ack): Promise<boolean> {
  try {
    await run();
    ack(done);
    return true;
  } catch (error) {
    if (!(error instanceof CardflowError)) throw error;
    refused++;
    return false;
  }
}

if (spec.mode === "race") {
  await Promise.all(
    spec.paymentIds!.map(async (payment_id) => {
      const ref = { external_account_id: ACCOUNT, payment_id };
      await attempt(() => engine.capture({ ...ref, amount: "100.00" }), { op: "captured", payment_id });
      for (let i = 0; i < 15; i++) await attempt(() => engine.refund({ ...ref, amount: "10.00" }), { op: "refunded", payment_id });
    }),
  );
  await engine.close();
  ack({ op: "done", refused });
} else {
  await Promise.all(
    Array.from({ length: spec.concurrency ?? 8 }, async () => {
      for (;;) {
        const { payment_id } = await engine.createIntent(STORED_CARD_INTENT);
        ack({ op: "created", payment_id });
        const ref = { external_account_id: ACCOUNT, payment_id };
        await attempt(() => engine.authorize(ref), { op: "authorized", payment_id });
        await attempt(() => engine.capture({ ...ref, amount: "100.00" }), { op: "captured", payment_id });
        for (let i = 0; i < 3; i++) await attempt(() => engine.refund({ ...ref, amount: "10.00" }), { op: "refunded", payment_id });
      }
    }),
  );
}
