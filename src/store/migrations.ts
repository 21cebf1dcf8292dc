// Numbered SQL migration files (`NNN_what.sql` in a directory next to the adapter), shared by the
// SQL adapters. A file already released never changes: a database that ran it keeps its effect, so a
// change is a new file (test/store/migrations.test.ts holds the released files' digests).
import { readdirSync, readFileSync } from "node:fs";

export interface Migration {
  /** 1, 2, ...: the file's number. */
  version: number;
  file: string;
  sql: string;
}

/** The directory's migrations in order; their numbers must run from 1 without gaps. */
export function loadMigrations(dir: URL): Migration[] {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith(".sql"))
    .sort();
  return files.map((file, i) => {
    const number = /^(\d{3})_[a-z0-9_]+\.sql$/.exec(file)?.[1];
    if (Number(number) !== i + 1) throw new Error(`${new URL(file, dir).pathname}: expected migration number ${String(i + 1).padStart(3, "0")}`);
    return { version: i + 1, file, sql: readFileSync(new URL(file, dir), "utf8") };
  });
}
