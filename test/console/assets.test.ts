// The web console's assets (src/console/routes.ts) over HTTP: gzip-compressed when Accept-Encoding
// takes gzip, as sent otherwise; a weight of 0 refuses a coding (`gzip;q=0`: identity).
import { request } from "node:http";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApi, type Api } from "../http/harness.js";

let api: Api;
beforeAll(async () => {
  api = await startApi();
});
afterAll(async () => {
  await api.close();
});

/** GET with exactly these headers (fetch would add its own Accept-Encoding and decode the answer). */
function get(path: string, acceptEncoding?: string): Promise<{ status: number; encoding: string | undefined; vary: string | undefined; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(`${api.base}${path}`, { headers: acceptEncoding === undefined ? {} : { "accept-encoding": acceptEncoding } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode!, encoding: res.headers["content-encoding"], vary: res.headers.vary, body: Buffer.concat(chunks) }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("the console's assets", () => {
  const gzipped = ["gzip", "gzip, deflate, br", "GZIP", "br;q=1.0, gzip;q=0.5", "gzip;q=0.001", "*", "*;q=0.3", "identity;q=0, gzip"];
  const plain = [undefined, "", "identity", "br", "gzip;q=0", "gzip; q=0", "gzip;Q=0.000", "identity, gzip;q=0", "*, gzip;q=0", "*;q=0", "deflate, *;q=0"];

  for (const path of ["/console", "/console/console.css", "/console/console.js"]) {
    it(`${path}: gzip when Accept-Encoding takes it, as sent when it refuses it (q=0) or names it not`, async () => {
      const identity = await get(path, "identity");
      expect([identity.status, identity.encoding, identity.vary]).toEqual([200, undefined, "accept-encoding"]);
      for (const accept of gzipped) {
        const res = await get(path, accept);
        expect([res.status, res.encoding, res.vary], accept).toEqual([200, "gzip", "accept-encoding"]);
        expect(gunzipSync(res.body).equals(identity.body), accept).toBe(true);
      }
      for (const accept of plain) {
        const res = await get(path, accept);
        expect([res.status, res.encoding, res.vary], String(accept)).toEqual([200, undefined, "accept-encoding"]);
        expect(res.body.equals(identity.body), String(accept)).toBe(true);
      }
    });
  }
});
