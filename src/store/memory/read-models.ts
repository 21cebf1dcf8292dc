// In-memory read-model store, the reference implementation of ReadModelStore.
import { checkCheckpoint, type ListPage, type ReadModelStore } from "../port/read-models.js";

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
    async getMany<T>(projection: string, keys: readonly string[]) {
      const t = table(projection);
      const found = new Map<string, T>();
      for (const key of keys) if (t.has(key)) found.set(key, structuredClone(t.get(key)) as T);
      return found;
    },
    async list<T>(projection: string, keyPrefix: string, { after = "", limit = Number.MAX_SAFE_INTEGER }: ListPage = {}) {
      return [...table(projection)]
        .filter(([k]) => k.startsWith(keyPrefix) && k > after)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .slice(0, limit)
        .map(([, d]) => structuredClone(d) as T);
    },
    async count(projection: string) {
      return table(projection).size;
    },
    async commitBatch(commits) {
      // Every check before any write: all or nothing.
      for (const c of commits) checkCheckpoint(c.projection, c.expectedCheckpoint, checkpoints.get(c.projection) ?? 0);
      for (const { projection, docs, checkpoint } of commits) {
        const t = table(projection);
        for (const { key, doc } of docs) t.set(key, structuredClone(doc));
        checkpoints.set(projection, checkpoint);
      }
    },
    async reset(projection) {
      docs.delete(projection);
      checkpoints.delete(projection);
    },
    async close() {},
  };
}
