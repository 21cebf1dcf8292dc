// Time is injected so that replay is exact and simulator waits (120 s blocking auth, settlement
// delays) run instantly in tests. Everything that needs "now" or a timer takes a Clock.

export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  /** Runs fn after ms; returns a function that cancels it. */
  setTimer(ms: number, fn: () => void): () => void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(ms, fn) {
    const t = setTimeout(fn, ms);
    return () => clearTimeout(t);
  },
};

export interface ManualClock extends Clock {
  /** Moves time forward, firing due timers in order; awaits the microtasks they start. */
  advance(ms: number): Promise<void>;
  set(epochMs: number): void;
}

export function manualClock(start = Date.parse("2026-01-01T00:00:00.000Z")): ManualClock {
  let now = start;
  let seq = 0;
  const timers = new Map<number, { at: number; fn: () => void }>();
  const settle = () => new Promise<void>((r) => setImmediate(r));
  return {
    now: () => now,
    setTimer(ms, fn) {
      const id = ++seq;
      timers.set(id, { at: now + Math.max(0, ms), fn });
      return () => timers.delete(id);
    },
    async advance(ms) {
      const until = now + ms;
      for (;;) {
        await settle();
        const due = [...timers].filter(([, t]) => t.at <= until).sort(([ia, a], [ib, b]) => a.at - b.at || ia - ib)[0];
        if (!due) break;
        timers.delete(due[0]);
        now = Math.max(now, due[1].at);
        due[1].fn();
      }
      now = until;
      await settle();
    },
    set(epochMs) {
      now = epochMs;
    },
  };
}

/** ISO 8601 with an explicit offset (spec §2.1 `date_created`), always UTC. */
export function isoTimestamp(epochMs: number): string {
  return new Date(epochMs).toISOString().replace("Z", "+00:00");
}
