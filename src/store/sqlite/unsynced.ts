// Bulk commits of the SQLite read models' file without any sync (synchronous=OFF), made safe by a
// durable mark. With OFF in WAL mode a power loss or OS crash can corrupt the whole file (a
// checkpoint may have copied pages into it, unsynced, and the WAL frames behind them been
// overwritten), not only lose its last commits. So a bulk catch-up first writes a mark naming this
// boot of the machine (Linux: /proc/sys/kernel/random/boot_id), syncs it, commits unsynced, syncs
// the file and its WAL at the end, and only then removes the mark. Whoever opens the file and finds
// a mark of another boot knows the machine went down while commits were unsynced: the file is
// discarded and the read models are rebuilt from the events (they are rebuildable by design).
// A process killed in its window (the machine still up) leaves its writes to the OS, which keeps
// them: its mark is settled at the next open by syncing the file for it.
import { randomUUID } from "node:crypto";
import { closeSync, fsyncSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";

/** This boot of the machine, or null where the OS does not tell (then nothing is committed unsynced). */
export function bootId(): string | null {
  try {
    return readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim() || null;
  } catch {
    return null;
  }
}

interface Mark {
  path: string;
  boot_id: string | null;
  pid: number;
}

/** `<file>.unsynced-<uuid>`: one per window, so windows of several processes never share one. */
const MARK = ".unsynced-";

function fsyncPath(path: string) {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw error;
  }
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

export function marksOf(file: string): Mark[] {
  const prefix = basename(file) + MARK;
  return readdirSync(dirname(file))
    .filter((name) => name.startsWith(prefix))
    .map((name) => {
      const path = join(dirname(file), name);
      try {
        const { boot_id, pid } = JSON.parse(readFileSync(path, "utf8")) as Partial<Mark>;
        return { path, boot_id: typeof boot_id === "string" ? boot_id : null, pid: typeof pid === "number" ? pid : 0 };
      } catch {
        // written but not synced when the machine went down: of another boot
        return { path, boot_id: null, pid: 0 };
      }
    });
}

/** Writes a mark of this boot for `file`, durably (its bytes and its directory entry); returns its path. */
export function markUnsynced(file: string, boot: string): string {
  const path = `${file}${MARK}${randomUUID()}`;
  writeFileSync(path, JSON.stringify({ boot_id: boot, pid: process.pid }));
  fsyncPath(path);
  fsyncPath(dirname(file));
  return path;
}

/** Makes every write to the database file and its WAL so far durable, then removes the mark. */
export function syncAndUnmark(file: string, mark: string) {
  fsyncPath(file);
  fsyncPath(`${file}-wal`);
  rmSync(mark, { force: true });
  fsyncPath(dirname(file));
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
};

/**
 * At open, before the file is opened (run it where no other process can open it meanwhile: the
 * events' write lock): a mark of another boot discards the file (database, WAL, shared memory) and
 * the marks; a mark of this boot whose process is gone is settled (synced, removed). Returns
 * whether the file was discarded.
 */
export function settleUnsynced(file: string, boot: string | null): boolean {
  const marks = marksOf(file);
  const stale = marks.some((m) => m.boot_id === null || m.boot_id !== boot);
  if (stale) for (const suffix of ["", "-wal", "-shm"]) rmSync(file + suffix, { force: true });
  for (const mark of marks) if (stale ? mark.boot_id !== boot : !alive(mark.pid)) syncAndUnmark(file, mark.path);
  return stale;
}
