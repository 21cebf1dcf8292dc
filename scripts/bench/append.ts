// Durable append throughput: SQLite (group commit) and PostgreSQL at several concurrencies, next
// to a raw loop of one write + fdatasync per append on the same disk, medians of several runs.
//   npx tsx scripts/bench/append.ts [--runs 3] [--ms 1500] [--dir /path/on/disk] [--no-postgres] [--pg-pool 10]
// PostgreSQL is an embedded server (fsync on, synchronous_commit on) unless DATABASE_URL is set.
// `benchAppend()` returns the figures for `npm run bench`.
import { closeSync, fdatasyncSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { randomUUID } from "node:crypto";
import { randomIds } from "../../src/ids.js";
import type { EventStore } from "../../src/store/port.js";
import { createPostgresStore } from "../../src/store/postgres/index.js";
import { createSqliteStore } from "../../src/store/sqlite/index.js";
import { startPostgres } from "../../test/support/postgres.js";
import { median } from "./lib.js";

export interface AppendFigure {
  store: "fdatasync" | "sqlite" | "postgres";
  concurrency: number;
  /** Median appends (or fdatasyncs) per second over the runs. */
  perSecond: number;
  runs: number[];
  /** SQLite only: mean appends carried by one commit. */
  appendsPerCommit?: number;
}

export interface BenchOptions {
  concurrencies?: number[];
  runs?: number;
  durationMs?: number;
  /** Directory on the disk to measure; a temp dir inside it is used and removed. */
  dir?: string;
  postgres?: boolean;
  /** Measure SQLite (and fdatasync); default true. */
  sqlite?: boolean;
  /** PostgreSQL connections per store handle; default: the adapter's default (10). */
  pgPoolSize?: number;
}

function fdatasyncRate(dir: string, durationMs: number): number {
  const fd = openSync(join(dir, "fsync.bin"), "w");
  const record = Buffer.alloc(256, 1);
  let n = 0;
  const start = performance.now();
  try {
    while (performance.now() - start < durationMs) {
      writeSync(fd, record);
      fdatasyncSync(fd);
      n++;
    }
  } finally {
    closeSync(fd);
  }
  return (n * 1000) / (performance.now() - start);
}

/** Event ids as the engine makes them (time-ordered UUIDs, src/ids.ts). */
const eventId = randomIds().uuid;
const benchEvent = (i: number) => ({
  id: eventId(),
  type: "payment.captured",
  version: 1,
  data: { amount: "10.00", currency: "USD", i },
  metadata: { timestamp: "2025-01-01T00:00:00.000Z", request_id: i },
});

/** `concurrency` callers, each appending one event at a time to its own stream, for durationMs. */
async function appendRate(store: EventStore, concurrency: number, durationMs: number): Promise<number> {
  const run = randomUUID().slice(0, 8);
  let n = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, w) => {
      for (let rev = -1; performance.now() - start < durationMs; rev++) {
        await store.append(`bench-${run}-${w}`, [benchEvent(n)], { expectedRevision: rev < 0 ? "no_stream" : rev });
        n++;
      }
    }),
  );
  return (n * 1000) / (performance.now() - start);
}

export async function benchAppend({ concurrencies = [1, 16, 64], runs = 3, durationMs = 1500, dir = tmpdir(), postgres = true, sqlite = true, pgPoolSize }: BenchOptions = {}): Promise<AppendFigure[]> {
  const work = mkdtempSync(join(dir, "cardflow-bench-"));
  const figures: AppendFigure[] = [];
  try {
    const fsyncRuns = Array.from({ length: sqlite ? runs : 0 }, () => fdatasyncRate(work, durationMs));
    figures.push({ store: "fdatasync", concurrency: 1, perSecond: median(fsyncRuns), runs: fsyncRuns });

    for (const concurrency of sqlite ? concurrencies : []) {
      const rates: number[] = [];
      let commits = 0;
      let appends = 0;
      for (let r = 0; r < runs; r++) {
        const path = join(work, `sqlite-${concurrency}-${r}.db`);
        const { events, readModels } = createSqliteStore({ path, onCommit: (k) => ((commits += 1), (appends += k)) });
        rates.push(await appendRate(events, concurrency, durationMs));
        await Promise.all([events.close(), readModels.close()]);
      }
      figures.push({ store: "sqlite", concurrency, perSecond: median(rates), runs: rates, appendsPerCommit: appends / commits });
    }

    if (postgres) {
      const server = process.env.DATABASE_URL ? undefined : await startPostgres();
      const url = process.env.DATABASE_URL ?? server!.url;
      try {
        for (const concurrency of concurrencies) {
          const rates: number[] = [];
          for (let r = 0; r < runs; r++) {
            const schema = `bench_${randomUUID().replaceAll("-", "").slice(0, 10)}`;
            const { events, readModels } = await createPostgresStore({ connectionString: url, schema, ...(pgPoolSize && { poolSize: pgPoolSize }) });
            rates.push(await appendRate(events, concurrency, durationMs));
            await Promise.all([events.close(), readModels.close()]);
          }
          figures.push({ store: "postgres", concurrency, perSecond: median(rates), runs: rates });
        }
      } finally {
        await server?.stop();
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return figures;
}

export function formatFigures(figures: AppendFigure[]): string {
  const fsync = figures.find((f) => f.store === "fdatasync")?.perSecond ?? NaN;
  const rows = figures.map((f) => [
    f.store,
    String(f.concurrency),
    Math.round(f.perSecond).toLocaleString("en-US"),
    `${(f.perSecond / fsync).toFixed(1)}x`,
    f.appendsPerCommit ? f.appendsPerCommit.toFixed(1) : "",
    f.runs.map((r) => Math.round(r)).join(" / "),
  ]);
  const head = ["store", "concurrency", "appends/s (median)", "vs fdatasync", "appends/commit", "runs"];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  return [head, ...rows].map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join("  ")).join("\n");
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: { runs: { type: "string" }, ms: { type: "string" }, dir: { type: "string" }, "no-postgres": { type: "boolean" }, "pg-pool": { type: "string" } },
  });
  const figures = await benchAppend({
    runs: values.runs ? Number(values.runs) : undefined,
    durationMs: values.ms ? Number(values.ms) : undefined,
    dir: values.dir,
    postgres: !values["no-postgres"],
    pgPoolSize: values["pg-pool"] ? Number(values["pg-pool"]) : undefined,
  });
  console.log(formatFigures(figures));
  // Other work on the machine moves every figure; the fdatasync row is measured in the same run.
  console.log(`load average at the end: ${loadavg().map((l) => l.toFixed(2)).join(" ")}`);
}
