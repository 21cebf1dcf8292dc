// The documents the runner's folds left, kept for the batches after them: what a fold reads most is
// a document folded a moment ago (the payment a request just changed). A fold is deterministic, so
// a read model's documents after checkpoint C are the same whichever process wrote them: a batch
// that starts from the checkpoint the kept documents were folded to takes them from here, without
// the store's read and its JSON.parse. A batch starting anywhere else (another process committed
// meanwhile, a reset) reads the store. A failed fold or commit forgets everything: what it read may
// have been written past its checkpoint by another process (its commit is refused for that), so
// what it folded is not the documents after any checkpoint.
import { setBounded } from "../src/bounded.js";
import type { ProjectionCommit, ReadModelStore } from "../src/store/port.js";

/** Documents kept per read model (the most recently folded): a few MB for the payments'. */
export const FOLDED_KEPT = 2_000;

/** A fold's reads of its stored documents (as of the checkpoint its batch starts from). */
export type FoldReads = <T>(name: string, keys: readonly string[]) => Promise<Map<string, T>>;

export function foldedDocs(getMany: ReadModelStore["getMany"], kept = FOLDED_KEPT) {
  const byName = new Map<string, { checkpoint: number; docs: Map<string, unknown> }>();
  return {
    /** The documents of `keys` as of `checkpoint`: the kept ones when the last fold of `name` ended there, the rest from the store. */
    async read<T>(name: string, keys: readonly string[], checkpoint: number): Promise<Map<string, T>> {
      let entry = byName.get(name);
      if (entry?.checkpoint !== checkpoint) byName.set(name, (entry = { checkpoint, docs: new Map() }));
      const found = new Map<string, T>();
      const missing: string[] = [];
      for (const key of keys) {
        const doc = entry.docs.get(key);
        if (doc === undefined) missing.push(key);
        else found.set(key, doc as T);
      }
      if (missing.length === 0) return found;
      for (const [key, doc] of await getMany<T>(name, missing)) {
        found.set(key, doc);
        setBounded(entry.docs, key, doc, kept);
      }
      return found;
    },
    /** A batch's commits, as folded: their documents kept, at their checkpoint (with the kept ones when those were at their start). */
    folded(commits: readonly ProjectionCommit[]): void {
      for (const { projection, docs, checkpoint, expectedCheckpoint } of commits) {
        // the others kept stay the documents after `checkpoint` only when they were those at its start
        let entry = byName.get(projection);
        if (!entry || entry.checkpoint !== expectedCheckpoint) byName.set(projection, (entry = { checkpoint, docs: new Map() }));
        for (const { key, doc } of docs) setBounded(entry.docs, key, doc, kept);
        entry.checkpoint = checkpoint;
      }
    },
    /** After a failed fold or commit: nothing kept is trusted. */
    forget(): void {
      byName.clear();
    },
  };
}
