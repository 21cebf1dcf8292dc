// Live updates: one event stream per signed-in tab (GET /v2/events/stream through the client,
// which reconnects by itself), shared by every page. A page says which events concern it and
// refreshes its data when one arrives; refreshes are coalesced (one load in flight, at most one
// queued), so a burst of events costs two requests, not one per event, and nothing polls.
import { createContext, type ComponentChildren } from "preact";
import { useCallback, useContext, useEffect, useRef, useState } from "preact/hooks";
import type { PublicEvent } from "../../client/index.js";
import { isUnauthorized, type Session } from "./api.js";
import { Reconnects } from "./reconnects.js";
import { html } from "./ui.js";

type Listener = (event: PublicEvent) => void;
export type LiveStatus = "connecting" | "open" | "reconnecting" | "stopped";

interface Live {
  status: LiveStatus;
  subscribe(listener: Listener): () => void;
}

const LiveContext = createContext<Live>({ status: "stopped", subscribe: () => () => undefined });

export function LiveProvider({ session, onUnauthorized, children }: { session: Session; onUnauthorized: () => void; children: ComponentChildren }) {
  const listeners = useRef(new Set<Listener>());
  const [status, setStatus] = useState<LiveStatus>("connecting");
  const [reconnects, setReconnects] = useState(0);
  useEffect(() => {
    const stop = new AbortController();
    let previous: LiveStatus = "connecting";
    const onStatus = (next: LiveStatus) => {
      if (previous === "reconnecting" && next === "open") setReconnects((n) => n + 1);
      previous = next;
      setStatus(next);
    };
    void (async () => {
      const items = session.client.streamEvents({ external_account_id: session.account.external_account_id }, { signal: stop.signal, onStatus });
      for await (const { event } of items) listeners.current.forEach((listener) => listener(event));
    })().catch((error: unknown) => {
      if (stop.signal.aborted) return;
      // the key was revoked or expired (the server ends its stream, the reconnection answers 401): sign out, as any request would
      if (isUnauthorized(error)) onUnauthorized();
      else setStatus("stopped");
    });
    return () => stop.abort();
  }, [session]);
  const subscribe = useCallback((listener: Listener) => (listeners.current.add(listener), () => void listeners.current.delete(listener)), []);
  const live: Live = { status, subscribe };
  return html`<${LiveContext.Provider} value=${live}><${Reconnects.Provider} value=${reconnects}>${children}</${Reconnects.Provider}></${LiveContext.Provider}>`;
}

/** Calls `onEvent` for each live event that `concerns` the page. */
export function useLiveEvents(concerns: (event: PublicEvent) => boolean, onEvent: (event: PublicEvent) => void): void {
  const { subscribe } = useContext(LiveContext);
  const latest = useRef({ concerns, onEvent });
  latest.current = { concerns, onEvent };
  useEffect(() => subscribe((event) => latest.current.concerns(event) && latest.current.onEvent(event)), [subscribe]);
}

const WORDS: Record<LiveStatus, string> = { connecting: "Connecting…", open: "Live", reconnecting: "Reconnecting…", stopped: "Not live: reload the page" };

/** The header's mark: whether what the pages show follows what happens. */
export function LiveMark() {
  const { status } = useContext(LiveContext);
  return html`<span class=${`live ${status}`} role="status" data-testid="live" title="Pages update as events happen (server-sent events)">${WORDS[status]}</span>`;
}
