// Connections the kernel has completed but the process has not accepted yet: closing the listener
// resets them (the client sees ECONNRESET after sending its request). libuv accepts one connection
// per event-loop turn, so under load they queue. Before the listener closes, the drain waits until
// none is queued, as Linux shows it: for a listening socket /proc/net/tcp's rx_queue is its accept
// queue, and a SYN_RECV entry is a handshake under way. Elsewhere (no /proc), nothing to wait for.
import { readFileSync } from "node:fs";

const LISTEN = "0A";
const SYN_RECV = "03";

/** Connections queued on the listening port (accept queue and handshakes), or 0 when it cannot be told. */
export function queuedConnections(port: number): number {
  const suffix = `:${port.toString(16).toUpperCase().padStart(4, "0")}`;
  let queued = 0;
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let table: string;
    try {
      table = readFileSync(file, "latin1");
    } catch {
      continue;
    }
    for (const line of table.split("\n")) {
      // sl local_address rem_address st tx_queue:rx_queue ...
      const [, local, , state, queues] = line.trim().split(/\s+/);
      if (!local?.endsWith(suffix)) continue;
      if (state === SYN_RECV) queued++;
      else if (state === LISTEN) queued += parseInt(queues!.split(":")[1]!, 16) || 0;
    }
  }
  return queued;
}

/**
 * Resolves once nothing is queued on the port (true), or at `until` (false). The last check is
 * synchronous, so a listener closed right after it leaves no queued connection behind but one
 * arriving in that instant.
 */
export async function acceptQueueDrained(port: number, until: number, pollMs = 5): Promise<boolean> {
  for (;;) {
    if (queuedConnections(port) === 0) return true;
    if (Date.now() >= until) return false;
    // a turn of the event loop: libuv accepts the next connection
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}
