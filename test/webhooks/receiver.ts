// A real HTTP receiver for webhook tests: records every request (raw body, headers, arrival
// order) and answers what the test says (200 by default; 500 or a delay to play a failing receiver).
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

export interface Received {
  raw: string;
  headers: IncomingHttpHeaders;
  event: { id: string; type: string; payment_id: string | null; sequence: number; external_account_id: string; data: { object: any } };
  /** The status answered. */
  status: number;
  at: number;
}

export async function startReceiver() {
  const received: Received[] = [];
  let answer: (event: Received["event"]) => number | Promise<number> = () => 200;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      const event = JSON.parse(raw);
      const status = await answer(event);
      received.push({ raw, headers: req.headers, event, status, at: Date.now() });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = (path = "/hooks") => `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
  return {
    url,
    received,
    /** Acknowledged (2xx) deliveries. */
    acknowledged: () => received.filter((r) => r.status >= 200 && r.status < 300),
    answerWith(fn: typeof answer) {
      answer = fn;
    },
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

/** Polls until the condition holds (real time; every 10 ms), failing after `ms`. */
export async function until(condition: () => boolean | Promise<boolean>, ms = 10_000, what = "condition"): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
