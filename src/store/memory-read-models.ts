// In-memory read-model store, the reference implementation of ReadModelStore.
import { checkCheckpoint, type ReadModelStore } from "./port.js";

export function createMemoryReadModels(): ReadModelStore {
  const docs = new Map<string, Map<string, unknown>>();
  const checkpoints = new Map<string, number>();
  const table = (projection: string) => {
    let t = docs.get(projection);
    if (!t) docs.set(projection, (t = new Map()));
    return t;
  };
  return {
    async checkpoint(projection) {
      return checkpoints.get(projection) ?? 0;
    },
    async get<T>(projection: string, key: string) {
      const doc = table(projection).get(key);
      return doc === undefined ? undefined : (structuredClone(doc) as T);
    },
    async list<T>(projection: string, keyPrefix: string) {
      return [...table(projection)]
        .filter(([k]) => k.startsWith(keyPrefix))
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([, d]) => structuredClone(d) as T);
    },
    async commit(projection, changes, checkpoint, expectedCheckpoint) {
      checkCheckpoint(projection, expectedCheckpoint, checkpoints.get(projection) ?? 0);
      const t = table(projection);
      for (const { key, doc } of changes) t.set(key, structuredClone(doc));
      checkpoints.set(projection, checkpoint);
    },
    async reset(projection) {
      docs.delete(projection);
      checkpoints.delete(projection);
    },
    async close() {},
  };
}
