// The load benchmarks' own connection (scripts/bench/client.ts connection): a connection reset under
// a request fails that request (the benchmark counts it as an error of its row, stop 44's CI saw
// one end row 13b's whole run), and the next request goes over a new connection.
import { createServer, type Server } from "node:http";
import type { Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { connection } from "../../scripts/bench/client.js";

let server: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

/** A server answering {"n": <requests so far>}; a request to /reset has its connection destroyed unanswered. */
async function listen() {
  let n = 0;
  const sockets = new Set<Socket>();
  server = createServer((req, res) => {
    n++;
    if (req.url === "/reset") return void req.socket.resetAndDestroy();
    const body = JSON.stringify({ n });
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) }).end(body);
  });
  server.on("connection", (s: Socket) => void sockets.add(s));
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return { base: `http://127.0.0.1:${port}`, connections: () => sockets.size };
}

describe("the benchmarks' connection", () => {
  it("fails the request a reset cut, then sends the next one over a new connection", async () => {
    const { base, connections } = await listen();
    const c = await connection(base);
    expect(await c.call(undefined, "GET", "/")).toEqual({ status: 200, body: { n: 1 } });
    await expect(c.call(undefined, "GET", "/reset")).rejects.toMatchObject({ code: "ECONNRESET" });
    expect(await c.call(undefined, "GET", "/")).toEqual({ status: 200, body: { n: 3 } });
    expect(await c.call(undefined, "GET", "/")).toEqual({ status: 200, body: { n: 4 } });
    expect(connections()).toBe(2);
    c.close();
  });
});
