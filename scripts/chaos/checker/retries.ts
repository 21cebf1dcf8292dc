// (d) A retry with the same Idempotency-Key returned the first answer. Two cases are seen from the
// client: a resend after an ok answer (the client lost it on purpose) must get the same bytes; a
// retry after a try whose outcome stayed unknown must either be the first execution (the effect
// carries its own request id) or replay it, never act anew nor refuse what an earlier try did.
// Acting anew: the retry's own request has effects beside an earlier one's, or it answered without
// the Idempotent-Replayed header where the machine had something to do; a retry the machine
// answers "nothing to do" (a card the first try saved) is answered as it stands, without the header.
// The one exception to "never refuse": the earlier try's processor call was abandoned (the
// processor did nothing) and nothing else of it stands, so the command is decided anew
// (src/engine/outcomes.ts earlierTry) and may be refused by the machine as it is now; (c) checks
// that refusal.
import { anomaly, type Anomaly } from "./anomaly.js";
import { standingEffects } from "./effects.js";
import { decidedAnew, TRANSIENT, type Model } from "./model.js";
import { answeredWithoutStep } from "./no-op.js";

export function checkRetries(model: Model): Anomaly[] {
  const found: Anomaly[] = [];
  for (const op of model.ops) {
    if (op.key === null) continue;
    const effects = standingEffects(model, op);
    op.tries.forEach((t, i) => {
      const c = t.complete;
      if (!c) return;
      if (t.invoke.resend) {
        const first = op.tries.find((x) => x.complete?.outcome === "ok" && !x.invoke.resend)?.complete;
        const transient = c.outcome === "unknown" || TRANSIENT.has(c.code ?? "");
        if (first && !transient && (c.outcome !== "ok" || c.body_sha256 !== first.body_sha256)) {
          found.push(anomaly("d", "resend_answer_differs", op.payment_id, op.op, `${op.kind} resent with its key answered ${c.status} ${c.code ?? ""} (replayed: ${c.replayed}), not the first answer's bytes`));
        }
        return;
      }
      const afterUnknown = op.tries.slice(0, i).some((x) => x.complete?.outcome === "unknown");
      if (!afterUnknown) return;
      const earlier = effects.filter((e) => e.metadata.request_id !== c.request_id);
      const ownEffects = effects.filter((e) => e.metadata.request_id === c.request_id);
      if (c.outcome === "ok" && earlier.length > 0 && (ownEffects.length > 0 || (!c.replayed && !answeredWithoutStep(model, op)))) {
        found.push(anomaly("d", "retry_reexecuted", op.payment_id, op.op, `${op.kind} retried after an unknown outcome ran again (request ${c.request_id}) although request ${earlier[0]!.metadata.request_id} had taken effect (${earlier[0]!.type}@${earlier[0]!.revision})`));
      }
      if (c.outcome === "refused" && !TRANSIENT.has(c.code ?? "") && earlier.length > 0 && !decidedAnew(model, op)) {
        found.push(anomaly("d", "retry_refused_after_effect", op.payment_id, op.op, `${op.kind} retried after an unknown outcome was refused (${c.status} ${c.code}) although an earlier try had taken effect (${earlier[0]!.type}@${earlier[0]!.revision}): not the first answer`));
      }
    });
  }
  return found;
}
