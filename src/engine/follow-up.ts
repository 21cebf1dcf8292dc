// What follows a step on its own (spec §3/§4.4/§4.8): an automatic-capture payment that reached
// requires_capture is captured; a synchronous-terminal payment that saves its card does so as
// soon as it is captured, so the token is in that answer (automatic or manual capture).
import { ProcessorRefused } from "../errors.js";
import { commandAllowed } from "./allowed.js";
import { attempt } from "./attempt.js";
import { captureStep } from "./commands/capture.js";
import { saveCardStep } from "./commands/save-card.js";
import type { Core } from "./core.js";
import type { CommandContext, Loaded } from "./payment-streams.js";

/** What follows on its own and has not happened yet at this point of the payment. */
export function followUpsDue(core: Core, loaded: Loaded): { capture: boolean; saveCard: boolean } {
  const { intent, terminal } = core.viewOf(loaded);
  const savesOnTerminal = terminal?.terminal_type === "A_sync" && intent.allow_saving_card && intent.external_customer_id !== null;
  return {
    capture: intent.capture_method === "automatic" && commandAllowed(loaded.snapshot, "capture"),
    saveCard: savesOnTerminal && commandAllowed(loaded.snapshot, "save_card"),
  };
}

export async function followUp(core: Core, paymentId: string, loaded: Loaded, ctx: CommandContext): Promise<Loaded> {
  if (followUpsDue(core, loaded).capture) {
    loaded = await attempt(core, paymentId, loaded, captureStep(core, loaded, core.viewOf(loaded).amount_capturable), ctx, "capture");
  }
  if (followUpsDue(core, loaded).saveCard) {
    const { intent } = core.viewOf(loaded);
    try {
      loaded = await attempt(core, paymentId, loaded, saveCardStep(core, loaded, intent.external_customer_id!), ctx, "save_card");
    } catch (error) {
      // the payment stands; the card just is not on file (e.g. expires before 03/30)
      if (!(error instanceof ProcessorRefused)) throw error;
      loaded = (await core.payments.load(paymentId))!;
    }
  }
  return loaded;
}
