// The append signal between processes on one PostgreSQL database (LISTEN/NOTIFY): after a group
// commit the appender sends NOTIFY with the last position it committed, and the subscribers of
// every other process wake at once instead of at their next poll.
// - NOTIFY goes after the commit, outside the append's transaction: a transaction that NOTIFYs
//   takes a database-wide lock at commit (the notification queue's), which would serialise the
//   group commits. Sends are coalesced: one NOTIFY in flight, carrying the highest position since.
// - It goes on a connection of its own, which commits asynchronously (synchronous_commit=off): a
//   notification is a hint, never data, so it need not wait for a WAL flush. The same connection
//   LISTENs; a process ignores its own notifications (its appends wake its subscribers directly).
// - Only sent while another process listens: each process says "listening" on the channel every
//   ANNOUNCE_MS (and "hello" once it listens), and one heard from nobody for LISTENER_TTL_MS stops
//   sending (a single process, the usual deployment, then sends no NOTIFY per commit). A process
//   answers another's "hello" with "listening"; for GRACE_MS after it connects, before the answers
//   are in, a process sends anyway. When it hears another process again after such a silence, it
//   sends the highest position it committed, so a newcomer misses nothing committed before its
//   sender heard of it.
// - Notifications are lost while that connection is down (pg_terminate_backend, a restart): it
//   connects again with a growing pause and, once listening, wakes the subscribers so they read
//   what they missed, and sends what it could not send meanwhile. The subscribers' slow poll
//   (pollMs) stays the safety net for a notification lost anyway.
// - A server that keeps the connection open but does not answer (frozen, the network gone) is
//   found by the "listening" said every ANNOUNCE_MS: a statement unanswered for ANSWER_MS drops
//   the connection (its socket destroyed), which connects again as above.
import pg from "pg";

export interface AppendSignal {
  /** Appends of this process committed up to `position`: tell the other processes. */
  send(position: number): void;
  close(): Promise<void>;
}

export interface AppendSignalOptions {
  connectionString: string;
  channel: string;
  /** Another process committed appends up to `position` (0: unknown, read anyway). */
  onAppended: (position: number) => void;
}

/** Pause before connecting again after the first failure (ms), doubled up to MAX_RETRY_MS. */
const RETRY_MS = 100;
const MAX_RETRY_MS = 5_000;
/** How often a process says it listens, and after how long without a word another is taken as gone (ms). */
const ANNOUNCE_MS = 2_000;
const LISTENER_TTL_MS = 3 * ANNOUNCE_MS;
/** After connecting, the others are taken as listening this long (their answers to "hello" take a round trip). */
const GRACE_MS = 1_000;

/** How long a statement of this connection waits for its answer (ms) before the connection is dropped. */
const ANSWER_MS = 5_000;

/** Shown in pg_stat_activity (and used by tests to find the connection). */
export const SIGNAL_APPLICATION_NAME = "cardflow append signal";

export function createAppendSignal({ connectionString, channel, onAppended }: AppendSignalOptions): AppendSignal {
  let client: pg.Client | undefined; // connected and listening
  let closed = false;
  let pending = 0; // highest position not sent yet
  let highest = 0; // highest position this process committed
  let heard = -Infinity; // when another process last spoke on the channel
  let graceUntil = -Infinity;
  const othersListen = () => performance.now() - heard < LISTENER_TTL_MS || performance.now() < graceUntil;
  let sending = false;
  let retry: { timer: NodeJS.Timeout; resolve: () => void } | undefined;

  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      retry = { timer: setTimeout(resolve, ms), resolve };
      retry.timer.unref();
    }).then(() => void (retry = undefined));

  async function connect(): Promise<void> {
    for (let failures = 0; !closed; failures++) {
      const c = new pg.Client({ connectionString, application_name: SIGNAL_APPLICATION_NAME, options: "-c synchronous_commit=off", connectionTimeoutMillis: 5_000, query_timeout: ANSWER_MS });
      c.on("error", () => undefined); // a dropped connection also ends it: 'end' below reconnects
      let own: number;
      try {
        await c.connect();
        await c.query(`LISTEN "${channel}"`);
        own = (await c.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
      } catch {
        await c.end().catch(() => undefined);
        await pause(Math.min(RETRY_MS * 2 ** failures, MAX_RETRY_MS));
        continue;
      }
      if (closed) return void (await c.end().catch(() => undefined));
      c.on("notification", (n) => {
        if (n.processId === own) return;
        if (!othersListen()) pending = Math.max(pending, highest); // they may have missed what we did not send
        heard = performance.now();
        if (n.payload === "hello") say("listening");
        else if (n.payload !== "listening") onAppended(Number(n.payload) || 0);
        flush();
      });
      c.once("end", () => {
        client = undefined;
        if (!closed) connecting = connect();
      });
      client = c;
      graceUntil = performance.now() + GRACE_MS; // until the others answer, take them as listening
      say("hello");
      onAppended(0); // appends notified while nobody listened: read them now
      flush();
      return;
    }
  }

  /**
   * A statement of the listening connection failed: a lost one ends by itself, one unanswered
   * past ANSWER_MS is ended here (its statement still running: pg destroys the socket). Its
   * 'end' connects again.
   */
  const drop = (c: pg.Client) => void c.end().catch(() => undefined);
  /** A word that is not a position (a process that does not know it wakes its subscribers anyway). */
  const say = (word: "hello" | "listening") => {
    const c = client;
    void c?.query({ name: "cardflow_notify", text: "SELECT pg_notify($1, $2)", values: [channel, word] }).catch(() => drop(c));
  };
  const announcing = setInterval(() => say("listening"), ANNOUNCE_MS).unref();

  function flush() {
    if (sending || !client || pending === 0) return;
    if (!othersListen()) return void (pending = 0); // nobody to tell
    const c = client;
    const position = pending;
    pending = 0;
    sending = true;
    // named: parsed and planned once per connection, not once per group commit
    c.query({ name: "cardflow_notify", text: "SELECT pg_notify($1, $2)", values: [channel, String(position)] }).then(
      () => {
        sending = false;
        flush();
      },
      () => {
        // the connection went away (or did not answer): sent again once connected (connect() flushes)
        sending = false;
        pending = Math.max(pending, position);
        drop(c);
      },
    );
  }

  let connecting = connect();
  return {
    send(position) {
      highest = Math.max(highest, position);
      pending = Math.max(pending, position);
      flush();
    },
    async close() {
      closed = true;
      clearInterval(announcing);
      if (retry) {
        clearTimeout(retry.timer);
        retry.resolve();
      }
      await connecting;
      await client?.end().catch(() => undefined);
    },
  };
}
