// Fair turns of the event loop (src/http/turns.ts), over real sockets: requests that arrive
// together are let in by turns worth one slice of work, so timers fire between them.
import { connect, type Socket } from "node:net";
import { performance } from "node:perf_hooks";
import { afterEach, expect, it } from "vitest";
import type { FastifyInstance } from "fastify";
import { createEngine } from "../../src/engine.js";
import { createServer } from "../../src/http/server.js";
import { TURN_SLICE_MS } from "../../src/http/turns.js";

const WORK_MS = 3;
const CLIENTS = 30;
const burn = (ms: number) => {
  for (const end = performance.now() + ms; performance.now() < end; );
};

let app: FastifyInstance | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await app?.close();
});

/** Answers once its whole response (headers and the JSON body) has arrived. */
const answered = (socket: Socket) =>
  new Promise<string>((resolve, reject) => {
    let text = "";
    socket.on("data", (chunk) => {
      text += chunk;
      if (/\r\n\r\n\{.*\}$/s.test(text)) resolve(text);
    });
    socket.once("error", reject);
  });

/**
 * The event loop's turns, counted by a callback that queues itself for the next turn: it runs
 * first in each turn's check phase, ahead of what the turn before queued.
 */
function turnCounter() {
  let turn = 0;
  let counting = false;
  const tick = () => {
    turn++;
    if (counting) setImmediate(tick);
  };
  return {
    now: () => turn,
    start: () => ((counting = true), setImmediate(tick)),
    stop: () => void (counting = false),
  };
}

it("lets in, in each turn of the event loop, only the requests one slice of work holds", async () => {
  const turns = turnCounter();
  const letInAt: number[] = [];
  app = createServer({
    engine: createEngine(),
    extensions: [
      (a) =>
        a.get("/work", async () => {
          letInAt.push(turns.now());
          burn(WORK_MS);
          return { ok: true };
        }),
    ],
  });
  await app.listen({ port: 0, host: "127.0.0.1" });
  const { port } = app.server.address() as { port: number };
  for (let i = 0; i < CLIENTS; i++) {
    const s = connect(port, "127.0.0.1");
    s.setEncoding("utf8");
    sockets.push(s);
  }
  await Promise.all(sockets.map((s) => new Promise((r) => s.once("connect", r))));
  await new Promise((r) => setTimeout(r, 50)); // accepted by the server

  // every request written at once: the server's next poll finds them all
  const answers = sockets.map(answered);
  turns.start();
  for (const s of sockets) s.write("GET /work HTTP/1.1\r\nHost: localhost\r\n\r\n");
  const texts = await Promise.all(answers);
  turns.stop();

  expect(texts.every((t) => t.startsWith("HTTP/1.1 200"))).toBe(true);
  const perTurn = new Map<number, number>();
  for (const t of letInAt) perTurn.set(t, (perTurn.get(t) ?? 0) + 1);
  // a request is let in while the turn's work is within the slice: at most slice ÷ work + 1 each
  expect(Math.max(...perTurn.values())).toBeLessThanOrEqual(Math.floor(TURN_SLICE_MS / WORK_MS) + 1);
  expect(perTurn.size).toBeGreaterThanOrEqual(Math.ceil((CLIENTS * WORK_MS) / (TURN_SLICE_MS + WORK_MS)));
});

it("lets a request in within the turn it arrived in when nothing waits", async () => {
  const turns = turnCounter();
  const arrivedAt: number[] = [];
  const letInAt: number[] = [];
  app = createServer({ engine: createEngine(), extensions: [(a) => a.get("/work", async () => (letInAt.push(turns.now()), { ok: true }))] });
  // the server's "request" event comes in the poll of the turn the request arrived in
  app.server.prependListener("request", () => arrivedAt.push(turns.now()));
  await app.listen({ port: 0, host: "127.0.0.1" });
  const { port } = app.server.address() as { port: number };
  const s = connect(port, "127.0.0.1");
  s.setEncoding("utf8");
  sockets.push(s);
  await new Promise((r) => s.once("connect", r));
  turns.start();
  for (let round = 0; round < 5; round++) {
    const answer = answered(s);
    s.write("GET /work HTTP/1.1\r\nHost: localhost\r\n\r\n");
    expect(await answer).toMatch(/^HTTP\/1\.1 200/);
  }
  turns.stop();
  // the ticker runs first in each turn's check phase: let in by the same turn's check phase, one count
  // after its arrival in the poll (a request put off to the next turn would be two)
  expect(letInAt.map((t, i) => t - arrivedAt[i]!)).toEqual([1, 1, 1, 1, 1]);
});
