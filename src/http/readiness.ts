// GET /readyz: may a load balancer send this process traffic? Not while it drains (from SIGTERM),
// not when its store does not answer (StoreUnavailable: 503), not when the read models are further
// behind the event log than the bound (lists and feeds would answer "behind"). The store's
// migrations ran before the server listened (the stores migrate when they open). Concurrent probes
// share one check.
import type { Engine } from "../engine.js";
import { PROJECTIONS } from "../../projections/registry.js";
import { readModelLag } from "../observability/read-lag.js";
import type { Drain } from "./drain.js";
import { HttpProblem } from "./problem.js";

export interface ReadinessOptions {
  /** Oldest unprojected event allowed, in seconds (default 30; 0: not checked). */
  maxLagSeconds?: number;
}

export function readiness(engine: Engine, drain: Pick<Drain, "draining"> | undefined, { maxLagSeconds = 30 }: ReadinessOptions = {}): () => Promise<void> {
  let running: Promise<void> | null = null;
  async function check() {
    const lag = await readModelLag({ store: engine.store, readModels: engine.readModels, clock: engine.clock, projections: PROJECTIONS });
    if (maxLagSeconds > 0 && lag.seconds > maxLagSeconds) {
      throw new HttpProblem(503, "read_models_behind", `the read models are ${Math.round(lag.seconds)} s behind the event log (READY_MAX_LAG_SECONDS ${maxLagSeconds})`, null, 1);
    }
  }
  return async () => {
    if (drain?.draining) throw new HttpProblem(503, "shutting_down", "this process is shutting down: send requests to another one", null, 1);
    running ??= check().finally(() => (running = null));
    return running;
  };
}
