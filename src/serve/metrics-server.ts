// The Prometheus endpoint: GET /metrics on its own listener (METRICS_PORT, bound to METRICS_HOST,
// 127.0.0.1 by default), never on the API's port, so the public API never exposes it. With
// `serve --workers N` the primary serves the sum over its workers (prom-client's
// AggregatorRegistry asks each worker for its registry over the cluster channel).
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface Scrape {
  contentType: string;
  metrics(): Promise<string>;
  /** False while some of what is summed cannot answer yet (a worker starting): 503 at once, not a scrape that times out. */
  ready?(): boolean;
}

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

/** Listens, or rejects with the listen error (EADDRINUSE: another process has the port). */
export async function startMetricsServer(port: number, host: string, scrape: Scrape, onError: (error: unknown) => void): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "").split("?")[0];
    if (path !== "/metrics" || (req.method !== "GET" && req.method !== "HEAD")) {
      res.writeHead(404, { "content-type": "text/plain" }).end("GET /metrics\n");
      return;
    }
    if (scrape.ready && !scrape.ready()) {
      res.writeHead(503, { "content-type": "text/plain", "retry-after": "1" }).end("workers are starting; retry shortly\n");
      return;
    }
    scrape.metrics().then(
      (body) => res.writeHead(200, { "content-type": scrape.contentType, "cache-control": "no-store" }).end(req.method === "HEAD" ? undefined : body),
      (error: unknown) => {
        onError(error);
        res.writeHead(500, { "content-type": "text/plain" }).end("metrics could not be collected\n");
      },
    );
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
