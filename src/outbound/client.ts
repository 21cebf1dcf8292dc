// The one HTTP client for every request cardflow makes to the outside (webhook deliveries, the
// processor adapters): https only outside the sandbox, no redirect followed (a 3xx is an answer,
// not an instruction), a hard timeout, a bounded answer, and every address judged by
// ./address-policy.ts at connection time: the client resolves the name itself and connects to the
// address it checked, so a name that resolves elsewhere a moment later (DNS rebinding) cannot slip
// through. Certificates are verified always; a private CA is trusted by configuration (OUTBOUND_CA_FILE).
import type { LookupAddress } from "node:dns";
import { lookup as dnsLookup } from "node:dns/promises";
import http from "node:http";
import https from "node:https";
import { isIP } from "node:net";
import { rootCertificates } from "node:tls";
import { judgeAddress, loopbackNameRefusal, type AddressPolicy } from "./address-policy.js";

export interface OutboundOptions extends AddressPolicy {
  /** Sandbox: plain http allowed too. Outside it, https only. */
  sandbox: boolean;
  /** PEM certificates trusted besides Node's own roots (a processor's private CA). */
  ca?: string | undefined;
  /** Default timeout of a request (ms). */
  timeoutMs?: number;
  /** Largest answer body read (bytes); a larger one is an error. Default 1 MiB. */
  maxBodyBytes?: number;
  /** Resolves a name to its addresses (default: the system's resolver, as every other program here). */
  resolve?: (hostname: string, family: number) => Promise<LookupAddress[]>;
}

export interface OutboundRequest {
  method?: "GET" | "POST" | "PUT" | "DELETE";
  headers?: Record<string, string>;
  body?: string;
  timeoutMs?: number;
  /** Only the status matters (a webhook's acknowledgement): the answer's body is read and dropped, whatever its size; `body` is "". */
  statusOnly?: boolean;
}

export interface OutboundAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** The policy refused the destination: nothing was sent. */
export class OutboundRefused extends Error {
  override readonly name = "OutboundRefused";
  readonly code = "EADDRNOTALLOWED";
}

/** No answer: connection refused or reset, TLS failure, timeout (the request may or may not have arrived). */
export class OutboundFailed extends Error {
  override readonly name = "OutboundFailed";
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

export type Outbound = ReturnType<typeof createOutbound>;

export function createOutbound(options: OutboundOptions) {
  const { sandbox, timeoutMs: defaultTimeout = 10_000, maxBodyBytes = 1 << 20, resolve = (hostname, family) => dnsLookup(hostname, { all: true, family }) } = options;
  const policy: AddressPolicy = { allowlist: options.allowlist, allowPrivate: options.allowPrivate, sandbox };
  const ca = options.ca ? [...rootCertificates, options.ca] : undefined;

  /** Why a name may not be requested: the first of its addresses the policy refuses, or null. */
  const nameVerdict = (hostname: string, addresses: LookupAddress[]) => {
    const verdicts = addresses.map(({ address }) => ({ address, verdict: judgeAddress(address, policy) }));
    const refused = verdicts.find((v) => !v.verdict.allowed);
    if (!refused || refused.verdict.allowed) return null;
    // `localhost` is ::1 as well as 127.0.0.1: an allowlist naming one of them does not allow the name
    const allowed = verdicts.filter((v) => v.verdict.allowed).map((v) => v.address);
    const others = allowed.length ? ` (its other address${allowed.length > 1 ? "es" : ""} ${allowed.join(", ")} allowed: a name is requested only when every address it resolves to is)` : "";
    // "10.9.9.9 is a special-purpose address …" said of the name: "… resolves to 10.9.9.9 which is …"
    return `${hostname} resolves to ${refused.verdict.reason.replace(" is ", " which is ")}${others}`;
  };

  /** Resolves a name, refusing it when any of its addresses is not allowed; the socket connects to what it returns. */
  function guardedLookup(hostname: string, lookupOptions: { all?: boolean; family?: number }, callback: LookupCallback): void {
    resolve(hostname, lookupOptions.family ?? 0).then(
      (addresses) => {
        const refused = nameVerdict(hostname, addresses);
        if (refused) return callback(new OutboundRefused(refused), "");
        if (lookupOptions.all) return callback(null, addresses);
        callback(null, addresses[0]!.address, addresses[0]!.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, ""),
    );
  }

  /**
   * Why a URL's host name may not be requested as it resolves now (at registration: a receiver
   * named to reach this host or its network is refused there and then, not only at each delivery);
   * null for an address literal (refusal() judges it). A name that does not resolve (yet), or not
   * within 2 s, is not refused here: delivery retries it.
   */
  async function nameRefusal(url: string): Promise<string | null> {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, "");
    if (isIP(host)) return null;
    let timer: NodeJS.Timeout | undefined;
    const unresolved = new Promise<null>((done) => (timer = setTimeout(done, 2_000, null)));
    const addresses = await Promise.race([resolve(host, 0).catch(() => null), unresolved]).finally(() => clearTimeout(timer));
    return addresses && nameVerdict(host, addresses);
  }

  /** Why this URL may not be requested (an address literal, a name of this host; a name is checked again on its resolved addresses at connection time), or null. */
  function refusal(target: URL): string | null {
    if (target.protocol !== "https:" && !(sandbox && target.protocol === "http:")) {
      return sandbox ? `${target.protocol} URLs are not requested (http or https)` : `${target.protocol} URLs are not requested outside the sandbox: https only`;
    }
    if (target.username || target.password) return "credentials in the URL are not sent";
    const host = target.hostname.replace(/^\[|\]$/g, "");
    if (!isIP(host)) return loopbackNameRefusal(host, policy);
    const verdict = judgeAddress(host, policy);
    return verdict.allowed ? null : verdict.reason;
  }

  function request(url: string, { method = "POST", headers = {}, body, timeoutMs = defaultTimeout, statusOnly = false }: OutboundRequest = {}): Promise<OutboundAnswer> {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return Promise.reject(new OutboundRefused(`not an absolute URL: ${JSON.stringify(url)}`));
    }
    const refused = refusal(target);
    if (refused) return Promise.reject(new OutboundRefused(refused));
    return new Promise((resolve, reject) => {
      let settled = false;
      const settle = (error: Error | null, answer?: OutboundAnswer) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (error) reject(error instanceof OutboundRefused || error instanceof OutboundFailed ? error : new OutboundFailed(error.message, { cause: error }));
        else resolve(answer!);
      };
      const sent = { ...headers, ...(body === undefined ? {} : { "content-length": String(Buffer.byteLength(body)) }) };
      const req = (target.protocol === "https:" ? https : http).request(target, {
        method,
        headers: { "user-agent": "cardflow/1", ...sent },
        // IP literals skip the lookup: refusal() judged them above
        lookup: guardedLookup as never,
        // no connection pool shared with other code: each request resolves and is judged anew
        agent: false,
        ...(ca ? { ca } : {}),
      });
      const fail = (error: Error) => {
        settle(error);
        req.destroy();
      };
      const started = Date.now();
      const timer = setTimeout(() => fail(new OutboundFailed(`no answer within ${timeoutMs} ms`)), timeoutMs);
      req.on("response", (res) => {
        if (statusOnly) {
          // the status is the answer: the body is read and dropped in what is left of the time,
          // then the connection is closed (a 2xx whose body trickles in is still a 2xx)
          settle(null, { status: res.statusCode ?? 0, headers: res.headers, body: "" });
          const drain = setTimeout(() => req.destroy(), Math.max(0, started + timeoutMs - Date.now())).unref();
          res.on("close", () => clearTimeout(drain));
          res.on("error", () => undefined);
          res.resume();
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBodyBytes) fail(new OutboundFailed(`answer larger than ${maxBodyBytes} bytes`));
          else chunks.push(chunk);
        });
        res.on("end", () => settle(null, { status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", fail);
        res.on("close", () => settle(new OutboundFailed("the connection closed before the answer ended")));
      });
      req.on("error", fail);
      req.end(body);
    });
  }

  return { request, refusal: (url: string) => refusal(new URL(url)), nameRefusal, sandbox, policy };
}

/**
 * Why a URL's text names no host right after `scheme://` (`http:///x`, `http:/x`, `http:x`), or
 * null: WHATWG parsing fixes those up to `http://x/`, a host the text never named there. Judged
 * on the text as that parsing reads it (tabs and newlines dropped, the ends trimmed).
 */
export function missingHost(raw: string): string | null {
  const text = raw.replace(/[\t\n\r]/g, "").replace(/^[\x00-\x20]+|[\x00-\x20]+$/g, "");
  if (/^[a-z][a-z0-9+.-]*:\/\/[^/\\?#]/i.test(text)) return null;
  const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(text)?.[0] ?? "";
  return `no host right after ${scheme}// (as in https://host/path), got ${JSON.stringify(raw)}`;
}
