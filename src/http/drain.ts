// Graceful close: requests in flight finish; every connection without one is closed at once, and
// the others as their request ends. Without this, idle keep-alive connections and connections
// that never sent a request keep the server open until their timeouts (about a minute).
import type { Socket } from "node:net";
import type { FastifyInstance } from "fastify";

export function drainOnClose(app: FastifyInstance): void {
  const requests = new Map<Socket, number>();
  let closing = false;

  app.server.on("connection", (socket: Socket) => {
    requests.set(socket, 0);
    socket.once("close", () => requests.delete(socket));
  });
  app.server.on("request", (req, res) => {
    const socket = req.socket;
    requests.set(socket, (requests.get(socket) ?? 0) + 1);
    res.once("close", () => {
      if (!requests.has(socket)) return;
      const left = requests.get(socket)! - 1;
      requests.set(socket, left);
      if (closing && left === 0) socket.destroySoon();
    });
  });
  app.addHook("preClose", async () => {
    closing = true;
    for (const [socket, inFlight] of requests) if (inFlight === 0) socket.destroySoon();
  });
}
