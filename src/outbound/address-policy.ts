// Which addresses an outbound request (a webhook, a processor adapter) may connect to. Refused:
// every range of the IANA IPv4 and IPv6 special-purpose address registries (loopback, private,
// link-local with the cloud metadata service, shared, documentation, benchmarking, reserved...)
// plus multicast, the deprecated site-local, IPv6 outside global unicast (2000::/3: reserved) and
// the host's own addresses. IPv6 forms that carry an IPv4 address (IPv4-mapped, IPv4-translated,
// IPv4-compatible, 6to4, NAT64) are judged by the IPv4 address they reach, so `::ffff:127.0.0.1`,
// `::ffff:0:7f00:1`, `::7f00:1`, `2002:7f00:1::` and `64:ff9b::7f00:1` are
// loopback, while a NAT64 address of a public host (IPv6-only networks) stays allowed.
// The operator's allowlist overrides all of it; in the sandbox, WEBHOOK_ALLOW_PRIVATE=1 lets
// loopback and private-use addresses through (local receivers), never link-local or the rest.
import ipaddr from "ipaddr.js";
import { networkInterfaces } from "node:os";

type Address = ipaddr.IPv4 | ipaddr.IPv6;
type Cidr = [Address, number];

interface Range {
  cidr: string;
  name: string;
  /** Loopback and private-use: allowed in the sandbox with WEBHOOK_ALLOW_PRIVATE=1. */
  local?: boolean;
}

/** IANA IPv4 Special-Purpose Address Registry (and multicast, from the address space registry). */
export const IPV4_SPECIAL: readonly Range[] = [
  { cidr: "0.0.0.0/8", name: "this network" },
  { cidr: "10.0.0.0/8", name: "private-use", local: true },
  { cidr: "100.64.0.0/10", name: "shared address space (carrier-grade NAT)" },
  { cidr: "127.0.0.0/8", name: "loopback", local: true },
  { cidr: "169.254.0.0/16", name: "link-local (cloud metadata)" },
  { cidr: "172.16.0.0/12", name: "private-use", local: true },
  { cidr: "192.0.0.0/24", name: "IETF protocol assignments" },
  { cidr: "192.0.2.0/24", name: "documentation (TEST-NET-1)" },
  { cidr: "192.31.196.0/24", name: "AS112-v4" },
  { cidr: "192.52.193.0/24", name: "AMT" },
  { cidr: "192.88.99.0/24", name: "6to4 relay anycast (deprecated)" },
  { cidr: "192.168.0.0/16", name: "private-use", local: true },
  { cidr: "192.175.48.0/24", name: "direct delegation AS112 service" },
  { cidr: "198.18.0.0/15", name: "benchmarking" },
  { cidr: "198.51.100.0/24", name: "documentation (TEST-NET-2)" },
  { cidr: "203.0.113.0/24", name: "documentation (TEST-NET-3)" },
  { cidr: "224.0.0.0/4", name: "multicast" },
  { cidr: "240.0.0.0/4", name: "reserved" },
  { cidr: "255.255.255.255/32", name: "limited broadcast" },
];

/**
 * IANA IPv6 Special-Purpose Address Registry (and multicast, site-local). The forms that embed an
 * IPv4 address (EMBEDDING below) are judged by that address instead.
 */
export const IPV6_SPECIAL: readonly Range[] = [
  { cidr: "::1/128", name: "loopback", local: true },
  { cidr: "::/128", name: "unspecified" },
  { cidr: "100::/64", name: "discard-only" },
  { cidr: "100:0:0:1::/64", name: "dummy prefix" },
  { cidr: "2001::/23", name: "IETF protocol assignments (Teredo, ORCHID, AMT, AS112, benchmarking...)" },
  { cidr: "2001:db8::/32", name: "documentation" },
  { cidr: "2620:4f:8000::/48", name: "direct delegation AS112 service" },
  { cidr: "3fff::/20", name: "documentation" },
  { cidr: "5f00::/16", name: "segment routing SIDs" },
  { cidr: "fc00::/7", name: "unique-local", local: true },
  { cidr: "fe80::/10", name: "link-local" },
  { cidr: "fec0::/10", name: "site-local (deprecated)" },
  { cidr: "ff00::/8", name: "multicast" },
  // the IPv6 address space outside global unicast (2000::/3) is reserved by the IETF (IANA IPv6
  // Address Space registry): no Internet host is there
  { cidr: "::/3", name: "reserved by the IETF (outside global unicast 2000::/3)" },
  { cidr: "4000::/2", name: "reserved by the IETF (outside global unicast 2000::/3)" },
  { cidr: "8000::/1", name: "reserved by the IETF (outside global unicast 2000::/3)" },
];

/** IPv6 ranges whose addresses carry an IPv4 address, and where it sits (first of its 4 bytes). */
const EMBEDDING: ReadonlyArray<{ cidr: string; name: string; at: number }> = [
  { cidr: "::ffff:0:0/96", name: "IPv4-mapped", at: 12 },
  { cidr: "::ffff:0:0:0/96", name: "IPv4-translated (SIIT)", at: 12 },
  { cidr: "::/96", name: "IPv4-compatible", at: 12 },
  { cidr: "64:ff9b::/96", name: "NAT64", at: 12 },
  { cidr: "64:ff9b:1::/48", name: "NAT64 local-use", at: 12 },
  { cidr: "2002::/16", name: "6to4", at: 2 },
];

/** Parsed, most specific first: an address in nested ranges is named by the narrowest. */
const parsed = <T extends { cidr: string }>(ranges: readonly T[]) => ranges.map((r) => ({ ...r, range: ipaddr.parseCIDR(r.cidr) as Cidr })).sort((a, b) => b.range[1] - a.range[1]);
const V4 = parsed(IPV4_SPECIAL);
const V6 = parsed(IPV6_SPECIAL);
const EMBEDDED = parsed(EMBEDDING);

export interface AddressPolicy {
  /** CIDRs (or single addresses) the operator allows whatever they are (OUTBOUND_ALLOWLIST). */
  allowlist: readonly string[];
  /** Sandbox with WEBHOOK_ALLOW_PRIVATE=1: loopback and private-use addresses allowed. */
  allowPrivate: boolean;
  /** The sandbox: a refusal may point at WEBHOOK_ALLOW_PRIVATE (production refuses that setting). */
  sandbox?: boolean;
}

export type Verdict = { allowed: true } | { allowed: false; reason: string };

/** Parses an allowlist entry (an address or a CIDR); throws naming the entry when it is neither. */
export function parseCidr(entry: string): Cidr {
  const text = entry.trim();
  // IPv4 written in full (a.b.c.d): ipaddr.js would also read "2" or "10.1" as addresses
  const address = text.split("/")[0]!;
  if (!address.includes(":") && !ipaddr.IPv4.isValidFourPartDecimal(address)) throw new Error(`${JSON.stringify(entry)} is not an IP address or CIDR`);
  try {
    if (text.includes("/")) return ipaddr.parseCIDR(text) as Cidr;
    const address = ipaddr.parse(text);
    return [address, address.kind() === "ipv4" ? 32 : 128];
  } catch {
    throw new Error(`${JSON.stringify(entry)} is not an IP address or CIDR`);
  }
}

const matches = (address: Address, [net, bits]: Cidr) => address.kind() === net.kind() && address.match(net, bits);

/** The IPv4 address an IPv6 address carries, with the form's name, if it is one of EMBEDDING. */
function embeddedIPv4(address: ipaddr.IPv6): { v4: ipaddr.IPv4; form: string } | undefined {
  // ::/128 and ::1 are not IPv4-compatible addresses: the special ranges above name them
  if (V6.some((r) => r.range[1] === 128 && matches(address, r.range))) return undefined;
  const form = EMBEDDED.find((r) => matches(address, r.range));
  if (!form) return undefined;
  const bytes = address.toByteArray();
  return { v4: new ipaddr.IPv4(bytes.slice(form.at, form.at + 4)), form: form.name };
}

/** The host's own addresses (every interface, as they are now): a request to itself is refused. */
export function hostAddresses(): string[] {
  return Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address.split("%")[0]!));
}

/**
 * Whether a connection to `text` (an IP address) is allowed. `own` is the host's own addresses
 * (default: its interfaces now).
 */
export function judgeAddress(text: string, policy: AddressPolicy, own: readonly string[] = hostAddresses()): Verdict {
  let address: Address;
  try {
    address = ipaddr.parse(text.replace(/^\[|\]$/g, "").split("%")[0]!);
  } catch {
    return { allowed: false, reason: `${text} is not an IP address` };
  }
  if (policy.allowlist.some((entry) => matches(address, parseCidr(entry)))) return { allowed: true };
  let judged: Address = address;
  let via = "";
  if (address.kind() === "ipv6") {
    const embedded = embeddedIPv4(address as ipaddr.IPv6);
    if (embedded) {
      judged = embedded.v4;
      via = ` (${embedded.form} form of ${embedded.v4.toString()})`;
      if (policy.allowlist.some((entry) => matches(judged, parseCidr(entry)))) return { allowed: true };
    }
  }
  const special = (judged.kind() === "ipv4" ? V4 : V6).find((r) => matches(judged, r.range));
  if (special && !(special.local && policy.allowPrivate)) {
    const hint = special.local && policy.sandbox ? "; allowed in the sandbox with WEBHOOK_ALLOW_PRIVATE=1, or by the operator's OUTBOUND_ALLOWLIST" : "; only the operator's OUTBOUND_ALLOWLIST allows it";
    return { allowed: false, reason: `${text}${via} is a special-purpose address (${special.name})${hint}` };
  }
  if (!special && own.some((mine) => ipaddr.isValid(mine) && sameAddress(ipaddr.parse(mine), judged))) {
    return { allowed: false, reason: `${text}${via} is an address of this host; only the operator's OUTBOUND_ALLOWLIST allows it` };
  }
  return { allowed: true };
}

/** The addresses `localhost` stands for (RFC 6761: always loopback, whatever a resolver says). */
export const LOOPBACK_NAME_ADDRESSES = ["127.0.0.1", "::1"] as const;

/**
 * Why a host name that names this host (`localhost`, `*.localhost`, with or without the final
 * dot) may not be requested, or null: allowed only when the policy allows every address it stands
 * for (127.0.0.1 and ::1). The registration of a webhook and a processor adapter's URL both judge
 * it so, by name, before any resolution.
 */
export function loopbackNameRefusal(host: string, policy: AddressPolicy): string | null {
  if (!/^(?:[^.]+\.)*localhost\.?$/i.test(host)) return null;
  const refused = LOOPBACK_NAME_ADDRESSES.filter((a) => !judgeAddress(a, policy, []).allowed);
  if (refused.length === 0) return null;
  const partly = refused.length < LOOPBACK_NAME_ADDRESSES.length ? `; ${refused.join(", ")} is not allowed` : "";
  return `${host} names this host (loopback: ${LOOPBACK_NAME_ADDRESSES.join(" and ")}); a name is requested only when every address it stands for is allowed: allow both in OUTBOUND_ALLOWLIST${partly}${policy.sandbox ? " (or, in the sandbox, WEBHOOK_ALLOW_PRIVATE=1)" : ""}`;
}

function sameAddress(a: Address, b: Address): boolean {
  const norm = (x: Address) => (x.kind() === "ipv6" && (x as ipaddr.IPv6).isIPv4MappedAddress() ? (x as ipaddr.IPv6).toIPv4Address() : x);
  const [x, y] = [norm(a), norm(b)];
  return x.kind() === y.kind() && x.toNormalizedString() === y.toNormalizedString();
}

/**
 * Whether CIDRs together hold every IPv4 address or every IPv6 address (the IPv4-mapped IPv6
 * range ::ffff:0:0/96 counts as IPv4): two halves (0.0.0.0/1, 128.0.0.0/1) are every address as
 * much as 0.0.0.0/0 is.
 */
export function coverEveryAddress(entries: readonly string[]): boolean {
  const value = (bytes: number[]) => bytes.reduce((n, b) => (n << 8n) | BigInt(b), 0n);
  const MAPPED = 0xffffn << 32n;
  const v4: [bigint, bigint][] = [];
  const v6: [bigint, bigint][] = [];
  for (const [net, bits] of entries.map(parseCidr)) {
    const width = net.kind() === "ipv4" ? 32 : 128;
    const size = 1n << BigInt(width - bits);
    const start = (value(net.toByteArray()) / size) * size;
    const range: [bigint, bigint] = [start, start + size - 1n];
    if (width === 32) v4.push(range);
    else {
      v6.push(range);
      const [from, to] = [range[0] > MAPPED ? range[0] : MAPPED, range[1] < MAPPED + 0xffffffffn ? range[1] : MAPPED + 0xffffffffn];
      if (from <= to) v4.push([from - MAPPED, to - MAPPED]);
    }
  }
  const covers = (ranges: [bigint, bigint][], end: bigint) => {
    let reach = 0n; // every address below it is held
    for (const [from, to] of ranges.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))) {
      if (from > reach) return false;
      if (to + 1n > reach) reach = to + 1n;
    }
    return reach > end;
  };
  return covers(v4, 0xffffffffn) || covers(v6, (1n << 128n) - 1n);
}
