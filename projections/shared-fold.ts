// The payments and timeline projections both fold each payment event through the machine. The
// runner hands them the same event objects, one projection after the other, each starting from
// the state the other one reached (a rebuild, a live catch-up): the second fold is then the first
// one again. The fold is a pure function of (state, event) and states are never mutated, so it is
// remembered per event object and given back when asked again from the very same state object.
import { foldStored, type PaymentState } from "../machines/fold.js";
import type { RecordedEvent } from "../src/store/port.js";

type Folded = ReturnType<typeof foldStored>;

/** The last fold of each event (weak: a batch's events and their folds go together). */
const folds = new WeakMap<RecordedEvent, { from: PaymentState | undefined; folded: Folded }>();

/** foldStored, computed once per event for projections that advance in step. */
export function foldShared(state: PaymentState | undefined, event: RecordedEvent): Folded {
  const last = folds.get(event);
  if (last && last.from === state) return last.folded;
  const folded = foldStored(state, event);
  folds.set(event, { from: state, folded });
  return folded;
}
