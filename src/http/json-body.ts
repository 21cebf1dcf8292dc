// Request bodies are JSON in UTF-8, read as sent. Fastify's own parser decodes any bytes as UTF-8
// (an invalid byte becomes U+FFFD: a merchant's reference silently changed), and ignores both the
// declared charset and a Content-Encoding (a gzip body read as garbled JSON); these are refused,
// naming what to send instead (./problem.ts: their codes).
import type { FastifyInstance } from "fastify";

const utf8 = new TextDecoder("utf-8", { fatal: true });
const CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)/i;

const refused = (code: string) => Object.assign(new Error(code), { code });

export function strictJsonBodies(app: FastifyInstance, bodyLimit: number): void {
  const parse = app.getDefaultJsonParser("error", "error");
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "buffer", bodyLimit }, (req, body, done) => {
    const encoding = req.headers["content-encoding"]?.trim().toLowerCase();
    if (encoding && encoding !== "identity") return done(refused("CF_BODY_ENCODED"), undefined);
    const charset = CHARSET.exec(req.headers["content-type"] ?? "")?.[1]?.toLowerCase();
    if (charset !== undefined && charset !== "utf-8" && charset !== "utf8") return done(refused("CF_BODY_CHARSET"), undefined);
    let text: string;
    try {
      text = utf8.decode(body as Buffer);
    } catch {
      return done(refused("CF_BODY_NOT_UTF8"), undefined);
    }
    parse(req, text, done);
  });
}
