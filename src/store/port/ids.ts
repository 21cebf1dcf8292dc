// Named sequences of integers shared by every process on one store (request ids: src/ids.ts).

export interface IdSequences {
  /**
   * Reserves `count` consecutive integers of a named sequence (from 1): returns the first. No two
   * calls, from any process on this store, get overlapping ranges. `count` 0 reads the next
   * integer and writes nothing (a watch that reads a count every second).
   */
  reserveIds(sequence: string, count: number): Promise<number>;
}
