// In-memory named sequences.
import type { IdSequences } from "../port/ids.js";

export function createMemorySequences(): IdSequences {
  const sequences = new Map<string, number>();
  return {
    async reserveIds(sequence, count) {
      const first = sequences.get(sequence) ?? 1;
      sequences.set(sequence, first + count);
      return first;
    },
  };
}
