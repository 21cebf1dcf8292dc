// Named sequences: one upsert reserves a range.
import type { IdSequences } from "../port/ids.js";
import type { Statements } from "./pool.js";

export function postgresSequences({ query }: Statements): IdSequences {
  return {
    async reserveIds(sequence, count) {
      if (count === 0) {
        const [found] = await query<{ next: string }>("SELECT next FROM sequences WHERE name = $1", [sequence]);
        return found ? Number(found.next) : 1;
      }
      const [r] = await query<{ next: string }>(
        "INSERT INTO sequences AS s (name, next) VALUES ($1, 1 + $2::bigint) ON CONFLICT (name) DO UPDATE SET next = s.next + $2::bigint RETURNING next",
        [sequence, count],
      );
      return Number(r!.next) - count;
    },
  };
}
