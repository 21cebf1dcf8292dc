// One webhook POST: http(s) only, no redirect followed (a 3xx is not an acknowledgement), a hard
// timeout, and, outside sandbox mode, no connection to a loopback, private, link-local or other
// internal address. The check runs on the addresses DNS gives at connection time and the socket
// connects to the address checked, so a name that resolves elsewhere later (DNS rebinding) cannot
// slip through.
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import http from "node:http";
import https from "node:https";
import { BlockList, isIPv4 } from "node:net";

const internal = new BlockList();
for (const [net, bits] of [
  ["0.0.0.0", 8], ["10.0.0.0", 8], ["100.64.0.0", 10], ["127.0.0.0", 8], ["169.254.0.0", 16], ["172.16.0.0", 12],
  ["192.0.0.0", 24], ["192.168.0.0", 16], ["198.18.0.0", 15], ["224.0.0.0", 4], ["240.0.0.0", 4],
] as const) internal.addSubnet(net, bits, "ipv4");
for (const [net, bits] of [["::", 128], ["::1", 128], ["fc00::", 7], ["fe80::", 10], ["ff00::", 8], ["64:ff9b::", 96]] as const) internal.addSubnet(net, bits, "ipv6");

/** Loopback, private, link-local, carrier-grade NAT, multicast, reserved (IPv4-mapped IPv6 included). */
export function isPrivateAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped) return internal.check(mapped, "ipv4");
  return isIPv4(address) ? internal.check(address, "ipv4") : internal.check(address, "ipv6");
}

export interface PostResult {
  /** The receiver's status; null when there was no answer. */
  status: number | null;
  error: string | null;
}

export interface PostOptions {
  timeoutMs: number;
  /** Sandbox mode: loopback and private addresses allowed (local receivers, tests). */
  sandbox: boolean;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

function guardedLookup(hostname: string, options: { all?: boolean }, callback: LookupCallback): void {
  dnsLookup(hostname, { all: true }, (err, addresses) => {
    if (err) return callback(err, "");
    const refused = addresses.find((a) => isPrivateAddress(a.address));
    if (refused) return callback(Object.assign(new Error(`${hostname} resolves to ${refused.address}, an internal address (allowed only in sandbox mode)`), { code: "EADDRNOTALLOWED" }), "");
    if (options.all) return callback(null, addresses);
    callback(null, addresses[0]!.address, addresses[0]!.family);
  });
}

export function postWebhook(url: string, body: string, headers: Record<string, string>, { timeoutMs, sandbox }: PostOptions): Promise<PostResult> {
  return new Promise((resolve) => {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return resolve({ status: null, error: "invalid URL" });
    }
    if (target.protocol !== "http:" && target.protocol !== "https:") return resolve({ status: null, error: `${target.protocol} URLs are not delivered to` });
    const host = target.hostname.replace(/^\[|\]$/g, "");
    if (!sandbox && isPrivateAddress(host)) return resolve({ status: null, error: `${host} is an internal address (allowed only in sandbox mode)` });
    let done = false;
    const finish = (result: PostResult) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(result);
    };
    const request = (target.protocol === "https:" ? https : http).request(target, {
      method: "POST",
      headers: { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)), "user-agent": "cardflow-webhooks/1", ...headers },
      ...(sandbox ? {} : { lookup: guardedLookup as never }),
    });
    const timer = setTimeout(() => request.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    request.on("response", (response) => {
      // the answer's body is not used: read and drop it (bounded by the timeout)
      response.resume();
      response.on("end", () => finish({ status: response.statusCode ?? null, error: null }));
      response.on("error", (err) => finish({ status: response.statusCode ?? null, error: err.message }));
    });
    request.on("error", (err) => finish({ status: null, error: err.message }));
    request.end(body);
  });
}
