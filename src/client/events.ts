// The event feed as they happen (GET /v2/events/stream, server-sent events), as an async
// iterator. Each item carries its cursor: keep the last one and pass it as `after` to resume,
// after a restart or a lost connection, with nothing missed or repeated. The iterator reconnects
// by itself (backoff with jitter) when the connection drops or the server drains, from the last
// cursor it saw (the stream opens with its starting cursor, so even a quiet stream resumes exactly).
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { ApiError, ConnectionError } from "./errors.js";
import { retryable, sleep, type CallOptions, type Open } from "./transport.js";

export interface StreamQuery {
  external_account_id: string;
  /** A cursor (an item's `cursor`, a page's `next_cursor`); absent: from now on. */
  after?: string;
  /** One type or several, comma-separated. */
  type?: string;
  payment_id?: string;
}

export interface StreamOptions extends Pick<CallOptions, "signal"> {
  /** Told when a connection opens, and when it is lost and being made again (a console's "live" mark). */
  onStatus?: (status: "open" | "reconnecting") => void;
}

export interface StreamItem<E> {
  /** Pass as `after` to resume after this event. */
  cursor: string;
  event: E;
}

type Message = { cursor: string } | EventSourceMessage;

/** One connection's messages, in order: cursors (`id:` lines) and events; ends with the connection. */
async function* messagesOf(response: Response): AsyncGenerator<Message> {
  const parsed: Message[] = [];
  const parser = createParser({ onId: (cursor) => parsed.push({ cursor }), onEvent: (message) => parsed.push(message) });
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      parser.feed(value);
      yield* parsed.splice(0);
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

/** Worth connecting again: no answer, or a 503 (the service is starting or stopping). */
const reconnectable = (error: unknown) => error instanceof ConnectionError || (error instanceof ApiError && retryable(error));

export function streamEvents<E>(open: Open, backoff: (attempt: number) => number, query: StreamQuery, { signal, onStatus }: StreamOptions = {}): AsyncIterable<StreamItem<E>> {
  return {
    async *[Symbol.asyncIterator]() {
      let cursor = query.after;
      let failures = 0;
      for (;;) {
        try {
          const response = await open({ method: "GET", path: "/v2/events/stream", query: { ...query, after: cursor } }, signal ? { signal } : {});
          failures = 0;
          onStatus?.("open");
          for await (const message of messagesOf(response)) {
            if ("cursor" in message) cursor = message.cursor;
            else if (message.event === "end") break; // the server drains: connect again (to another), from the cursor
            else yield { cursor: cursor ?? "0", event: JSON.parse(message.data) as E };
          }
        } catch (error) {
          if (signal?.aborted) return; // the caller stopped the stream: it ends, as a break would end it
          if (!reconnectable(error) && !(error instanceof TypeError)) throw error; // TypeError: the connection broke mid-stream
        }
        if (signal?.aborted) return;
        onStatus?.("reconnecting");
        // (a successful connection resets the count; an abort meanwhile ends the stream)
        if (!(await sleep(backoff(failures++), signal).then(() => true, () => false))) return;
      }
    },
  };
}
