// The event feed as server-sent events (extension): GET /v2/events/stream keeps the connection
// open and writes each of the account's public events as it is indexed, so a console or a tool
// is told at once instead of polling. The server is woken by the feed's own index (one catch-up
// subscription per process, other processes' appends included), never by a timer per client.
// Each event's `id:` is its cursor (and the stream opens with the cursor it starts from): a client that reconnects sends it back (`after`, or the
// standard `Last-Event-ID` header) and misses nothing. When the server drains, every stream ends
// with a final `event: end` carrying the cursor to resume from elsewhere; so does a stream whose
// API key is revoked or expires while it is open.
import type { IncomingHttpHeaders } from "node:http";
import { PassThrough } from "node:stream";
import { z } from "zod";
import { coalesced } from "../../coalesced.js";
import { InvalidRequest } from "../../errors.js";
import { Cursor, Id } from "../../inputs.js";
import type { Webhooks } from "../../webhooks/index.js";
import { type FeedEntry, type FeedScope } from "../../webhooks/feed.js";
import { defineRoute } from "../route.js";
import { typesOf } from "./events.js";

export const StreamEventsInput = z.strictObject({
  external_account_id: Id,
  /** A cursor (an `id:` of this stream, a next_cursor of GET /v2/events: opaque, this account's); absent: from now on. */
  after: Cursor(200, "an event's id or a next_cursor this account was given").optional(),
  /** One type or several, comma-separated. */
  type: z.string().max(1000).optional(),
  payment_id: Id.optional(),
});

export const EVENT_STREAM_TYPE = "text/event-stream; charset=utf-8";

export interface EventStreamOptions {
  /** A comment line this often keeps proxies and idle-connection timers from closing a quiet stream (ms). Default 15 s. */
  heartbeatMs?: number;
  /** Events read from the feed per read. Default 100. */
  batch?: number;
  /**
   * Whether the key a stream was opened with still authenticates (given the request's headers):
   * asked before each read and every `keyCheckMs`, so a revoked or expired key's stream ends
   * (`event: end`, reason `unauthorized`) instead of carrying on. Absent: never asked.
   */
  keyStillValid?: (headers: IncomingHttpHeaders) => Promise<boolean>;
  /** How often an open stream's key is checked (ms). Default 500 (with api-keys' 500 ms cache: a revoked key's stream ends within a second, as its requests answer 401). */
  keyCheckMs?: number;
}

/** The open streams of one server: drained (each ended with its final event) when it closes. */
export function createEventStreams({ heartbeatMs = 15_000, batch = 100, keyStillValid, keyCheckMs = 500 }: EventStreamOptions = {}) {
  const open = new Set<(reason: string) => void>();
  /** Feeds this server started so that it hears of new events (stopped when it has closed). */
  const started = new Set<Webhooks["feed"]>();
  let draining = false;

  function stream(webhooks: Webhooks, account: string, input: z.output<typeof StreamEventsInput>, headers: IncomingHttpHeaders): PassThrough {
    const lastEventId = String(headers["last-event-id"] ?? "");
    const { feed } = webhooks;
    const types = typesOf(input.type);
    // cursors are opaque and bound to the account (src/webhooks/cursor.ts): a Last-Event-ID or `after` that is not one is a 400
    // (ignoring it would start the stream at now, silently skipping what came since the client's cursor)
    const fromLastEvent = (() => {
      try {
        return lastEventId ? feed.cursors.decode(account, lastEventId) : undefined;
      } catch {
        throw new InvalidRequest("Last-Event-ID: not a cursor of this account's feed; reconnect without it (from now on) or with a next_cursor this account was given", "Last-Event-ID", "cursor_invalid");
      }
    })();
    const resumeFrom = fromLastEvent ?? (input.after === undefined ? undefined : feed.cursors.decode(account, input.after));
    const given = fromLastEvent === undefined ? input.after : lastEventId;
    const cursorOf = (position: number) => feed.cursors.encode(account, position);
    const scope: FeedScope = input.payment_id === undefined ? { account } : { account, payment_id: input.payment_id };
    const out = new PassThrough();
    let cursor = resumeFrom ?? -1; // -1: the head, once known
    let announced = false;
    let ended = false;

    const write = async (chunk: string) => {
      if (ended || out.write(chunk)) return;
      await new Promise((resolve) => {
        out.once("drain", resolve);
        out.once("close", resolve);
      });
    };
    const send = async (entry: FeedEntry) => {
      cursor = entry.position;
      if (entry.event.external_account_id !== account || (types && !types.includes(entry.event.type))) return;
      await write(`id: ${cursorOf(entry.position)}\ndata: ${JSON.stringify(entry.event)}\n\n`);
    };
    /** False once the stream's key no longer authenticates; the stream has ended then. */
    const keyValid = async () => {
      if (!keyStillValid || (await keyStillValid(headers))) return true;
      end("unauthorized");
      return false;
    };
    // one reader at a time; signals that come while it reads share the next read
    const pump = coalesced(async () => {
      if (!(await keyValid())) return;
      if (!announced) {
        // from now on: the head at the call; the events past it are sent as the feed indexes them
        if (cursor < 0) cursor = await feed.head();
        else cursor = await feed.resumeAt(scope, given, cursor);
        // an id without data: the client knows where it stands before any event (EventSource keeps it as lastEventId)
        await write(`id: ${cursorOf(cursor)}\n\n`);
        announced = true;
      }
      for (;;) {
        if (ended) return;
        const entries = await feed.entries(scope, cursor, batch);
        for (const entry of entries) await send(entry);
        if (entries.length < batch) return;
      }
    });
    const end = (reason: string) => {
      if (ended) return;
      // the cursor of the last event read: resume there (on another server, after a restart)
      out.end(`event: end\ndata: ${JSON.stringify({ reason, next_cursor: cursorOf(Math.max(cursor, 0)) })}\n\n`);
      ended = true;
    };
    const wake = () => void pump().catch(() => end("error"));
    const unsubscribe = feed.onIndexed(wake);
    const heartbeat = setInterval(() => void write(": keep-alive\n\n"), heartbeatMs);
    heartbeat.unref();
    const keyCheck = keyStillValid ? setInterval(() => void keyValid().catch(() => end("error")), keyCheckMs) : undefined;
    keyCheck?.unref();
    open.add(end);
    out.once("close", () => {
      ended = true;
      unsubscribe();
      clearInterval(heartbeat);
      clearInterval(keyCheck);
      open.delete(end);
    });
    // the client's EventSource waits this long before it reconnects
    out.write("retry: 2000\n\n");
    if (draining) end("draining");
    else {
      started.add(feed);
      wake(); // the head announced at once: the feed's first start catches up first, which may take long
      void feed.start().then(wake, () => end("error"));
    }
    return out;
  }

  return {
    stream,
    /** Ends every open stream with its final event; new ones end at once (the server is closing). */
    drain() {
      draining = true;
      for (const end of [...open]) end("draining");
    },
    /** After the server closed: its feed subscriptions stop (a running delivery stops its own anyway). */
    async stop() {
      await Promise.all([...started].map((feed) => feed.stop()));
      started.clear();
    },
  };
}

export type EventStreams = ReturnType<typeof createEventStreams>;

export function eventStreamRoutes(webhooks: Webhooks, streams: EventStreams) {
  return [
    defineRoute({
      method: "GET",
      path: "/events/stream",
      versions: ["v2"],
      summary: "Follow the account's events as server-sent events",
      description:
        "`text/event-stream`: each public event (as in GET /v2/events) as it happens, one `data:` line of JSON with the event's cursor as `id:`. Without `after`, from now on; with `after` (or the `Last-Event-ID` header a reconnecting EventSource sends), every event after that cursor first. Filters: `type` (comma-separated), `payment_id`. A comment line every 15 s keeps a quiet connection open. When the server shuts down the stream ends with `event: end` and `data: {\"reason\":\"draining\",\"next_cursor\":\"…\"}`: reconnect with that cursor. Once the API key is revoked or expires the stream ends the same way with `\"reason\":\"unauthorized\"` (reconnecting answers 401); one that cannot go on (its store unreachable) with `\"reason\":\"error\"` and the cursor it reached, to reconnect with.",
      extension: true,
      auth: "api_key",
      contentType: EVENT_STREAM_TYPE,
      input: StreamEventsInput,
      response: () => z.string().meta({ title: "EventStream", description: "server-sent events" }),
      run: async (input, { account, headers }) => streams.stream(webhooks, account!, input, headers),
      present: (stream: PassThrough) => stream,
    }),
  ];
}
