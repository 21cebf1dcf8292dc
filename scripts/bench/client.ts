// The benchmarks' HTTP client: one request over a kept-alive connection of node:http. Not fetch:
// the clients share 2 cores with the server they measure, and fetch (undici's WHATWG streams,
// Headers, AbortSignal per request) costs the client several times the CPU and garbage; its
// scavenges (8 ms mean under row 14's 16 readers) landed inside the latencies it timed.
import { Agent, request } from "node:http";

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
 * GET `path`: the answer's status and its first `bytes` bytes as text (the whole text when the
 * status is not 200), the rest read and dropped: a load whose check is the answer's start (a list
 * page that is not empty) costs its client no parse, no copy. The list rows' client parsed 30 KB
 * pages at half a core of the 2 the server under test shares, and its collections of them stalled
 * every reader at once.
 */
export function peek(base: string, key: string | undefined, path: string, bytes: number): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = key === undefined ? {} : { authorization: `Bearer ${key}` };
    const req = request(`${base}${path}`, { method: "GET", agent, headers }, (res) => {
      const status = res.statusCode ?? 0;
      const chunks: Buffer[] = [];
      let kept = 0;
      res.on("data", (c: Buffer) => {
        if (status !== 200 || kept < bytes) {
          chunks.push(c);
          kept += c.length;
        }
      });
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString();
        resolve({ status, text: status === 200 ? text.slice(0, bytes) : text });
      });
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}

/** Closes the kept-alive connections (a script's end). */
export const closeClient = () => agent.destroy();
