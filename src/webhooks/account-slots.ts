// Posts in flight per account, over all its endpoints' workers in one process: a bound, and a
// queue of the workers waiting for a slot. A freed slot wakes one waiting worker (the one waiting
// longest), not all of them: a busy account's endpoints do not spin through turns for one slot.

export function accountSlots(limit: number) {
  const inFlight = new Map<string, number>();
  /** Per account, the waiting workers' wake-ups, in the order they began waiting. */
  const waiting = new Map<string, Set<() => void>>();

  /** Wakes the longest-waiting worker of the account while a slot is free. */
  function handOn(account: string): void {
    const queue = waiting.get(account);
    const next = queue?.values().next().value;
    if (!next || (inFlight.get(account) ?? 0) >= limit) return;
    queue!.delete(next);
    next();
  }

  return {
    /** Takes a slot if one is free. */
    take(account: string): boolean {
      const n = inFlight.get(account) ?? 0;
      if (n >= limit) return false;
      inFlight.set(account, n + 1);
      return true;
    },
    release(account: string): void {
      const n = inFlight.get(account)! - 1;
      if (n === 0) inFlight.delete(account);
      else inFlight.set(account, n);
      handOn(account);
    },
    /** A worker found no free slot: `wake` is called once when one is freed. */
    wait(account: string, wake: () => void): void {
      let queue = waiting.get(account);
      if (!queue) waiting.set(account, (queue = new Set()));
      queue.add(wake);
    },
    /** A worker's turn ended with slots left: the next waiting one may use them. */
    handOn,
    forget(account: string, wake: () => void): void {
      waiting.get(account)?.delete(wake);
    },
  };
}
export type AccountSlots = ReturnType<typeof accountSlots>;
