// The benchmarks' HTTP clients: call(), one request over a kept-alive connection of node:http (set-ups,
// and the rows whose load is light), and connection(), a connection of one client's own that makes
// next to no garbage (the load rows 13 and 14). Not fetch:
// the clients share 2 cores with the server they measure, and fetch (undici's WHATWG streams,
// Headers, AbortSignal per request) costs the client several times the CPU and garbage; its
// scavenges (8 ms mean under row 14's 16 readers) landed inside the latencies it timed.
import { once } from "node:events";
import { Agent, request } from "node:http";
import { connect, type Socket } from "node:net";

export interface Answer {
  status: number;
  body: any;
}

const agent = new Agent({ keepAlive: true, maxSockets: 256 });

/** `method path` on `base` with a bearer key (when given) and a JSON body (when given, or its text); the answer's JSON parsed. */
export function call(base: string, key: string | undefined, method: string, path: string, body?: object | string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined || typeof body === "string" ? body : JSON.stringify(body);
    const headers: Record<string, string | number> = {};
    if (key !== undefined) headers.authorization = `Bearer ${key}`;
    if (payload !== undefined) Object.assign(headers, { "content-type": "application/json", "content-length": Buffer.byteLength(payload) });
    const req = request(`${base}${path}`, { method, agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString();
        try {
          resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : null });
        } catch {
          resolve({ status: res.statusCode ?? 0, body: text });
        }
      });
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(payload);
  });
}

/**
 * A kept-alive HTTP/1.1 connection of its own for requests one after another, reading into one
 * buffer it keeps (net's `onread`), for loads whose client must make next to no garbage: node:http
 * gives every chunk read a buffer of its own, and row 14's reader process, taking 30 KB pages at
 * 5,000 a second, ran a full collection of its heap about 9 times a second (290 in 32 s, 4 ms each:
 * V8 collects when the memory held outside its heap grows), every one stalling all 16 readers
 * inside the latencies they timed. Answers need a Content-Length (the server's JSON does).
 */
export async function connection(base: string) {
  const { hostname, port } = new URL(base);
  let onData: ((n: number, buf: Buffer) => void) | undefined;
  let onFail: ((e: Error) => void) | undefined;
  const buffer = Buffer.allocUnsafe(256 * 1024);
  const open = () => {
    const s = connect({ host: hostname, port: Number(port), onread: { buffer, callback: (n) => (onData?.(n, buffer), true) } });
    s.setNoDelay(true);
    // only the current socket's end fails the request under way (not an old one's late 'close')
    const fail = (e: Error) => s === socket && onFail?.(e);
    s.on("error", fail);
    s.on("close", () => fail(new Error("the server closed the connection")));
    return s;
  };
  let socket: Socket = open();
  await once(socket, "connect");
  const host = `${hostname}:${port}`;

  /** The answer's status and its body's first `keep` bytes as text (the whole body when the status is not 200). */
  function send(method: string, path: string, key: string | undefined, body: string | undefined, keep: number): Promise<{ status: number; text: string }> {
    return new Promise((resolve, reject) => {
      let head = "";
      let status = 0;
      let length = -1;
      let read = 0;
      let text = "";
      onFail = reject;
      onData = (n, buf) => {
        let start = 0;
        if (length < 0) {
          const end = head === "" ? buf.indexOf("\r\n\r\n", 0, "latin1") : -1;
          if (end >= 0 && end < n) {
            head = buf.toString("latin1", 0, end);
            start = end + 4;
          } else {
            // a head longer than one read: its end may straddle the two
            const before = head.length;
            head += buf.toString("latin1", 0, n);
            const at = head.indexOf("\r\n\r\n");
            if (at < 0) return; // the head goes on in the next read
            start = at + 4 - before;
            head = head.slice(0, at);
          }
          status = Number(head.slice(9, 12));
          const declared = /\r\ncontent-length: *(\d+)/i.exec(head);
          if (!declared) return reject(new Error(`an answer without Content-Length: ${head.split("\r\n")[0]}`));
          length = Number(declared[1]);
        }
        const kept = status === 200 ? Math.max(0, Math.min(n, start + keep - text.length) - start) : n - start;
        if (kept > 0) text += buf.toString("utf8", start, start + kept);
        read += n - start;
        if (read >= length) {
          onData = onFail = undefined;
          resolve({ status, text });
        }
      };
      // a connection reset or closed under the last request (that request failed): the next one opens a new connection
      if (socket.destroyed) socket = open();
      const auth = key === undefined ? "" : `Authorization: Bearer ${key}\r\n`;
      const content = body === undefined ? "" : `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n`;
      socket.write(`${method} ${path} HTTP/1.1\r\nHost: ${host}\r\n${auth}${content}\r\n${body ?? ""}`);
    });
  }
  return {
    /** GET: the status and the body's first `bytes` bytes as text (all of it when the status is not 200). */
    get: (path: string, key: string | undefined, bytes: number) => send("GET", path, key, undefined, bytes),
    /** As call() above, on this connection. */
    async call(key: string | undefined, method: string, path: string, body?: object): Promise<Answer> {
      const { status, text } = await send(method, path, key, body === undefined ? undefined : JSON.stringify(body), Infinity);
      try {
        return { status, body: text ? JSON.parse(text) : null };
      } catch {
        return { status, body: text };
      }
    },
    close: () => void socket.destroy(),
  };
}

/** Closes the kept-alive connections (a script's end). */
export const closeClient = () => agent.destroy();
