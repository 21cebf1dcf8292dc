// A table read model that is operational state (API keys' last use, webhook deliveries), not a
// projection the runner prepares: made on each store handle once, before its first read or write.
import type { ReadModelStore } from "./read-models.js";
import type { ReadModelShape } from "./tables.js";

/**
 * prepare() of the projection, made once per store handle and shared by every caller; a failure
 * (the store away for a moment) is not kept as the answer: the next call tries again.
 */
export function prepareOnce(projection: string, shape: ReadModelShape): (readModels: ReadModelStore) => Promise<unknown> {
  const prepared = new WeakMap<ReadModelStore, Promise<unknown>>();
  return (readModels) => {
    let ready = prepared.get(readModels);
    if (!ready) {
      ready = readModels.prepare(projection, shape).catch((error: unknown) => (prepared.delete(readModels), Promise.reject(error)));
      prepared.set(readModels, ready);
    }
    return ready;
  };
}
