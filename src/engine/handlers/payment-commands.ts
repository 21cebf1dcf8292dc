// The thin handlers of the commands on an existing payment: each validates its input, takes the
// command's clock reading and runs its decider through the pipeline (./pipeline.ts). They answer
// the payment as it then stands; createEngine presents it.
import type { Clock } from "../../clock.js";
import { CancelInput, type CancelRequest, CaptureInput, type CaptureRequest, parseInput, ProcessPaymentInput, type ProcessPaymentRequest, RefundInput, type RefundRequest } from "../../inputs.js";
import { InvalidRequest } from "../../errors.js";
import { ANSWERS, whatWasWrong } from "../../processors/answers.js";
import type { ProcessorEvent } from "../../processors/port.js";
import { commandClock, type CommandContext } from "../context.js";
import { decideCancel } from "../deciders/cancel.js";
import { decideCapture } from "../deciders/capture.js";
import { decideProcessPayment } from "../deciders/process-payment.js";
import { decideRefund } from "../deciders/refund.js";
import { decideReport } from "../deciders/report.js";
import type { Loaded } from "../streams/payment-streams.js";
import type { Pipeline } from "./pipeline.js";

interface Deps {
  pipeline: Pipeline;
  clock: Clock;
}

/** Spec §4.6: capture (a payment that saves its card on a synchronous terminal does so once captured: the policy). */
export const captureHandler = ({ pipeline, clock }: Deps) =>
  async (raw: CaptureRequest, ctx: CommandContext = {}): Promise<Loaded> => {
    const input = parseInput(CaptureInput, raw);
    ctx = commandClock(clock, ctx);
    return pipeline.onPayment(input.external_account_id, input.payment_id, (loaded) => pipeline.run(loaded, { command: "capture", decide: decideCapture }, input, ctx, { followUps: true }));
  };

/** Extension: cancel before capture. */
export const cancelHandler = ({ pipeline, clock }: Deps) =>
  async (raw: CancelRequest, ctx: CommandContext = {}): Promise<Loaded> => {
    const input = parseInput(CancelInput, raw);
    ctx = commandClock(clock, ctx);
    return pipeline.onPayment(input.external_account_id, input.payment_id, (loaded) => pipeline.run(loaded, { command: "cancel", decide: decideCancel }, input, ctx));
  };

/** Extension: full or partial refund. */
export const refundHandler = ({ pipeline, clock }: Deps) =>
  async (raw: RefundRequest, ctx: CommandContext = {}): Promise<Loaded> => {
    const input = parseInput(RefundInput, raw);
    ctx = commandClock(clock, ctx);
    return pipeline.onPayment(input.external_account_id, input.payment_id, (loaded) => pipeline.run(loaded, { command: "refund", decide: decideRefund }, input, ctx));
  };

/** Processor B client SDK: process the payment whose card the SDK collected (automatic capture follows). */
export const processPaymentHandler = ({ pipeline, clock }: Deps) =>
  async (raw: ProcessPaymentRequest, ctx: CommandContext = {}): Promise<Loaded> => {
    const input = parseInput(ProcessPaymentInput, raw);
    ctx = commandClock(clock, ctx);
    return pipeline.onPaymentOfSecret(input.client_secret, (loaded) => pipeline.run(loaded, { command: "authorize", decide: decideProcessPayment }, input, ctx, { followUps: true }));
  };

/** What a processor reports on its own (the simulators' connect() receives it); then what follows on its own. */
export const reportHandler = ({ pipeline, clock }: Deps) =>
  async (paymentId: string, reported: ProcessorEvent): Promise<void> => {
    // a report outside the port's types is refused for good (it would not become valid if sent again)
    const parsed = ANSWERS.Event.safeParse(reported);
    if (!parsed.success) throw new InvalidRequest(`processor report for payment ${paymentId} is malformed (nothing recorded): ${whatWasWrong(parsed.error)}`);
    const event = parsed.data;
    const { now } = commandClock(clock, {});
    await pipeline.onPayment(null, paymentId, (current) => {
      const ctx: CommandContext = { now, actor: `processor:${current.snapshot.context.processor}` };
      return pipeline.run(current, { command: "record processor outcome", decide: decideReport }, event, ctx, { followUps: true });
    });
  };
