// A requested capture settles captureSettleMs later. The processor keeps it on its side until
// cardflow has taken the report: a report the store cannot take now (an outage) is made again,
// and a process that starts makes the ones a stopped or killed process left.
import type { Clock } from "../../clock.js";
import { StoreUnavailable } from "../../store/port.js";
import type { ProcessorSide } from "../processor-side.js";
import type { ProcessorReport } from "../port.js";

/** A requested capture the processor will report settled (epoch ms). */
interface Settlement {
  amount: string;
  due: number;
}
/** How soon a settlement the store could not take is reported again. */
const SETTLE_RETRY_MS = 1_000;

export function createSettlements({ side, clock, captureSettleMs, report }: { side: ProcessorSide; clock: Clock; captureSettleMs: number; report: ProcessorReport }) {
  function settleIn(paymentId: string, ms: number) {
    clock.setTimer(ms, () => {
      const pending = side.get<Settlement>("settlements", paymentId);
      if (!pending) return; // another process reported it
      report(paymentId, { kind: "capture_settled", amount: pending.amount }).then(
        () => side.set("settlements", paymentId, undefined),
        (error: unknown) => {
          if (error instanceof StoreUnavailable) settleIn(paymentId, SETTLE_RETRY_MS);
          else side.set("settlements", paymentId, undefined); // refused: the payment awaits no settlement (any more)
        },
      );
    });
  }

  return {
    settleLater(paymentId: string, amount: string) {
      side.set("settlements", paymentId, { amount, due: clock.now() + captureSettleMs } satisfies Settlement);
      settleIn(paymentId, captureSettleMs);
    },
    /** Once connected to an engine: the settlements left pending (by this process or one that stopped) are reported when due. */
    resume() {
      for (const [paymentId, { due }] of side.entries<Settlement>("settlements")) settleIn(paymentId, Math.max(0, due - clock.now()));
    },
  };
}
