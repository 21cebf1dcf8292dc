// How far the read models are behind the event log, for /readyz and the lag gauges: the events
// after the lowest checkpoint of the engine's projections (the runner commits them together), and
// the age of the oldest of those events. A few reads of the store, made when asked (a probe, a
// scrape), never on a request's path.
import type { Clock } from "../clock.js";
import type { EventStore, ReadModelStore } from "../store/port.js";

export interface ReadModelLag {
  /** Events appended and not projected yet, counted up to the limit asked for. */
  events: number;
  /** Age of the oldest of them (0 when none). */
  seconds: number;
}

export interface LagSource {
  store: EventStore;
  readModels: ReadModelStore;
  clock: Clock;
  /** The projections kept by the engine (PROJECTIONS). */
  projections: readonly { name: string }[];
}

export async function readModelLag({ store, readModels, clock, projections }: LagSource, countUpTo = 1): Promise<ReadModelLag> {
  const checkpoints = await Promise.all(projections.map((p) => readModels.checkpoint(p.name)));
  const behind = await store.readAll({ after: Math.min(...checkpoints), maxCount: countUpTo });
  if (behind.length === 0) return { events: 0, seconds: 0 };
  const oldest = Date.parse(behind[0]!.metadata.timestamp);
  return { events: behind.length, seconds: Math.max(0, (clock.now() - oldest) / 1000) };
}
