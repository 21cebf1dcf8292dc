// GET /console: the web console (src/console/app), served by the API's own server (/console/ is
// redirected to it), and /favicon.ico. The page and its assets are public (they hold no data);
// every call the console makes is an API call with the API key the person signed in with. Assets
// are sent gzip-compressed when accepted (`Accept-Encoding: gzip;q=0` refuses it).
import { gzipSync } from "node:zlib";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { consoleScript } from "./bundle.js";
import { FAVICON_ICO } from "./favicon.js";
import { CONSOLE_CSS, CONSOLE_HTML } from "./page.js";

// beyond the server's own on every answer (Cache-Control: no-store, nosniff: src/http/hardening.ts)
const PAGE_HEADERS = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  "referrer-policy": "no-referrer",
};

interface Asset {
  type: string;
  body: Buffer;
  gzip: Buffer;
}
const assetOf = (type: string, text: string): Asset => ({ type, body: Buffer.from(text), gzip: gzipSync(text, { level: 9 }) });

export function registerConsole(app: FastifyInstance): void {
  let script: Promise<Asset> | undefined;
  const html = assetOf("text/html; charset=utf-8", CONSOLE_HTML);
  const css = assetOf("text/css; charset=utf-8", CONSOLE_CSS);

  function send(req: FastifyRequest, reply: FastifyReply, asset: Asset) {
    const gzip = acceptsGzip(req.headers["accept-encoding"]);
    reply.headers(PAGE_HEADERS).header("vary", "accept-encoding").type(asset.type);
    if (gzip) reply.header("content-encoding", "gzip");
    return reply.send(gzip ? asset.gzip : asset.body);
  }
  app.get("/console", (req, reply) => send(req, reply, html));
  // a typed or linked trailing slash is the same console (its routes are after the #)
  app.get("/console/", (_req, reply) => reply.redirect("/console", 301));
  app.get("/favicon.ico", (_req, reply) => reply.type("image/x-icon").send(FAVICON_ICO));
  app.get("/console/console.css", (req, reply) => send(req, reply, css));
  app.get("/console/console.js", async (req, reply) => {
    script ??= consoleScript().then(
      (text) => assetOf("text/javascript; charset=utf-8", text),
      (error) => {
        script = undefined; // try again on the next request
        throw error;
      },
    );
    return send(req, reply, await script);
  });
}

/**
 * Whether an Accept-Encoding takes gzip (RFC 9110 §12.5.3): gzip named with a weight above 0, or
 * `*` so and gzip not named; a weight of 0 refuses it (`gzip;q=0`: identity then). Codings are
 * named in any case.
 */
export function acceptsGzip(header: string | undefined): boolean {
  let any = false;
  for (const item of (header ?? "").toLowerCase().split(",")) {
    const [coding, ...params] = item.split(";").map((part) => part.trim());
    const q = params.find((param) => /^q\s*=/.test(param));
    const accepted = q === undefined || Number(q.slice(q.indexOf("=") + 1).trim()) > 0;
    if (coding === "gzip") return accepted;
    if (coding === "*") any = accepted;
  }
  return any;
}
