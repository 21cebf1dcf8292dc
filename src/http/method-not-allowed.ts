// A path that exists under other methods answers 405 with `Allow` (RFC 9110 §15.5.6), not 404:
// `GET /v2/payment/auth` is a wrong method, not a missing endpoint. The routes are collected as
// fastify registers them, so this list cannot drift from the router.
import type { FastifyInstance } from "fastify";

export function collectAllowedMethods(app: FastifyInstance): (path: string) => string[] {
  const routes: Array<{ pattern: RegExp; methods: string[] }> = [];
  app.addHook("onRoute", ({ url, method }) => {
    if (!url) return;
    // path parameters (`:payment_id`) match one segment
    const pattern = new RegExp(`^${url.split("/").map((s) => (s.startsWith(":") ? "[^/]+" : s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))).join("/")}$`);
    routes.push({ pattern, methods: [method].flat() });
  });
  return (path) => [...new Set(routes.filter((r) => r.pattern.test(path)).flatMap((r) => r.methods))].sort();
}
