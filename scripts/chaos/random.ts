// A seeded pseudo-random generator (mulberry32): the run's choices (operations, amounts, faults and
// their times) follow from the seed. The interleavings of real processes do not: a seed replays the
// same plan, not the same history.
export interface Random {
  next(): number;
  int(min: number, max: number): number;
  between(min: number, max: number): number;
  chance(p: number): boolean;
  pick<T>(items: readonly T[]): T;
  /** A choice by weight: { a: 3, b: 1 } picks a three times as often as b. */
  weighted<K extends string>(weights: Partial<Record<K, number>>): K;
  /** Another generator derived from this seed and a name (a worker's, the faults'). */
  fork(name: string): Random;
}

export function random(seed: number): Random {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const self: Random = {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    between: (min, max) => min + next() * (max - min),
    chance: (p) => next() < p,
    pick: (items) => items[Math.floor(next() * items.length)]!,
    weighted(weights) {
      const entries = Object.entries(weights) as Array<[never, number]>;
      let roll = next() * entries.reduce((sum, [, w]) => sum + w, 0);
      for (const [k, w] of entries) if ((roll -= w) < 0) return k;
      return entries[entries.length - 1]![0];
    },
    fork: (name) => random([...name].reduce((h, c) => Math.imul(h ^ c.charCodeAt(0), 0x01000193) >>> 0, (seed ^ 0x811c9dc5) >>> 0)),
  };
  return self;
}
