// A requested capture settles captureSettleMs later. The processor keeps it on its side until
// cardflow has taken the report: a report the store cannot take now (an outage) is made again
// (./report-again.ts), and a process that starts makes the ones a stopped or killed process left.
import type { Clock } from "../../clock.js";
import { StoreUnavailable } from "../../store/port.js";
import type { ProcessorSide } from "../processor-side.js";
import type { ProcessorReport } from "../port.js";
import { reportAgainWhileUnavailable } from "./report-again.js";

/** A requested capture the processor will report settled (epoch ms). */
interface Settlement {
  amount: string;
  due: number;
}

export function createSettlements({ side, clock, captureSettleMs, report }: { side: ProcessorSide; clock: Clock; captureSettleMs: number; report: ProcessorReport }) {
  async function settle(paymentId: string) {
    const pending = side.get<Settlement>("settlements", paymentId);
    if (!pending) return; // another process reported it
    try {
      await report(paymentId, { kind: "capture_settled", amount: pending.amount });
    } catch (error) {
      // refused: the payment awaits no settlement (any more); unavailable: it stays pending, reported again
      if (!(error instanceof StoreUnavailable)) side.set("settlements", paymentId, undefined);
      throw error;
    }
    side.set("settlements", paymentId, undefined);
  }
  const settleIn = (paymentId: string, ms: number) => clock.setTimer(ms, () => void reportAgainWhileUnavailable(clock, () => settle(paymentId)).catch(() => undefined));

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
