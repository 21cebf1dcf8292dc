// The outbound address policy, as a table: every range of the IANA IPv4 and IPv6 special-purpose
// registries (first and last address), each IPv4 range again in every IPv6 form that carries an
// IPv4 address (mapped, compatible, 6to4, NAT64 well-known and local-use), public addresses and
// their forms allowed, the host's own addresses, the sandbox's WEBHOOK_ALLOW_PRIVATE and the
// operator's allowlist.
import ipaddr from "ipaddr.js";
import { describe, expect, it } from "vitest";
import { IPV4_SPECIAL, IPV6_SPECIAL, judgeAddress, loopbackNameRefusal, parseCidr, type AddressPolicy } from "../../src/outbound/address-policy.js";

const STRICT: AddressPolicy = { allowlist: [], allowPrivate: false };
const PRIVATE_OK: AddressPolicy = { allowlist: [], allowPrivate: true };
const NONE: string[] = [];
const allowed = (address: string, policy = STRICT, own = NONE) => judgeAddress(address, policy, own).allowed;

const v4Bytes = (a: string) => ipaddr.IPv4.parse(a).toByteArray();
const hex = (bytes: number[]) => [((bytes[0]! << 8) | bytes[1]!).toString(16), ((bytes[2]! << 8) | bytes[3]!).toString(16)].join(":");
/** The IPv6 forms that carry this IPv4 address. */
const forms = (v4: string): Record<string, string> => ({
  mapped: `::ffff:${v4}`,
  "mapped (hex)": `::ffff:${hex(v4Bytes(v4))}`,
  compatible: `::${hex(v4Bytes(v4))}`,
  "6to4": `2002:${hex(v4Bytes(v4))}::1`,
  NAT64: `64:ff9b::${v4}`,
  "NAT64 local-use": `64:ff9b:1::${hex(v4Bytes(v4))}`,
});

const first = (cidr: string) => ipaddr.parseCIDR(cidr)[0].toString();
const last = (cidr: string) => (cidr.includes(":") ? ipaddr.IPv6.broadcastAddressFromCIDR(cidr) : ipaddr.IPv4.broadcastAddressFromCIDR(cidr)).toString();

describe("IANA IPv4 special-purpose registry", () => {
  it.each(IPV4_SPECIAL.map((r) => [r.cidr, r.name, r.local ?? false] as const))("%s (%s) is refused, also in every IPv6 form", (cidr, name, local) => {
    expect(judgeAddress(first(cidr), STRICT, NONE)).toEqual({ allowed: false, reason: expect.stringContaining(`(${name})`) });
    expect(judgeAddress(`::ffff:${first(cidr)}`, STRICT, NONE)).toEqual({ allowed: false, reason: expect.stringContaining(`(${name})`) });
    for (const address of new Set([first(cidr), last(cidr)])) {
      expect(allowed(address), address).toBe(false);
      for (const [form, v6] of Object.entries(forms(address))) {
        expect(allowed(v6), `${form} ${v6}`).toBe(false);
        expect(allowed(v6, PRIVATE_OK), `${form} ${v6} with WEBHOOK_ALLOW_PRIVATE`).toBe(local);
      }
      // WEBHOOK_ALLOW_PRIVATE lets loopback and private-use through, nothing else
      expect(allowed(address, PRIVATE_OK), `${address} with WEBHOOK_ALLOW_PRIVATE`).toBe(local);
    }
  });

  it("covers the registry's ranges, multicast and the cloud metadata address", () => {
    expect(IPV4_SPECIAL.map((r) => r.cidr)).toEqual(
      expect.arrayContaining([
        "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12", "192.0.0.0/24", "192.0.2.0/24",
        "192.31.196.0/24", "192.52.193.0/24", "192.88.99.0/24", "192.168.0.0/16", "192.175.48.0/24", "198.18.0.0/15", "198.51.100.0/24",
        "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4", "255.255.255.255/32",
      ]),
    );
    expect(judgeAddress("169.254.169.254", PRIVATE_OK, NONE)).toEqual({ allowed: false, reason: expect.stringContaining("link-local") });
  });

  it("the addresses next to the ranges are public and allowed, in every form", () => {
    for (const address of ["9.255.255.255", "11.0.0.0", "100.63.255.255", "100.128.0.0", "126.255.255.255", "128.0.0.0", "172.15.255.255", "172.32.0.0", "192.0.1.255", "192.0.3.0", "192.167.255.255", "192.169.0.0", "198.17.255.255", "198.20.0.0", "223.255.255.255", "8.8.8.8", "93.184.216.34"]) {
      expect(judgeAddress(address, STRICT, NONE), address).toEqual({ allowed: true });
      for (const [form, v6] of Object.entries(forms(address))) expect(allowed(v6), `${form} ${v6}`).toBe(true);
    }
  });
});

describe("IANA IPv6 special-purpose registry", () => {
  // the space outside global unicast is tested below: its ranges' ends are named by narrower ones (::, ff…)
  const outsideUnicast = (r: { name: string }) => r.name.startsWith("reserved by the IETF");
  it.each(IPV6_SPECIAL.filter((r) => !outsideUnicast(r)).map((r) => [r.cidr, r.name, r.local ?? false] as const))("%s (%s) is refused", (cidr, name, local) => {
    expect(judgeAddress(first(cidr), STRICT, NONE)).toEqual({ allowed: false, reason: expect.stringContaining(`(${name})`) });
    for (const address of new Set([first(cidr), last(cidr)])) {
      expect(allowed(address), address).toBe(false);
      expect(allowed(address, PRIVATE_OK), `${address} with WEBHOOK_ALLOW_PRIVATE`).toBe(local);
    }
  });

  it("the issue's examples: IPv4-compatible and 6to4 loopback, TEST-NET, Teredo, documentation", () => {
    for (const address of ["::7f00:1", "2002:7f00:1::", "::ffff:127.0.0.1", "64:ff9b::a9fe:a9fe", "192.0.2.1", "2001:0:4136:e378:8000:63bf:3fff:fdd2", "2001:db8::1", "[::1]", "fe80::1%eth0"]) {
      expect(allowed(address), address).toBe(false);
    }
  });

  it("IPv6 outside global unicast (2000::/3) is reserved: refused, whatever the sandbox allows; an IPv4-translated form (SIIT) is judged by its IPv4 address", () => {
    expect(IPV6_SPECIAL.filter(outsideUnicast).map((r) => r.cidr)).toEqual(["::/3", "4000::/2", "8000::/1"]);
    for (const address of ["::ffff:0:0:7f00:1", "1::1", "100:1::1", "1fff:ffff::1", "4000::1", "7fff::1", "8000::1", "fbff::1", "fe00::1"]) {
      expect(judgeAddress(address, STRICT, NONE), address).toEqual({ allowed: false, reason: expect.stringContaining("(reserved by the IETF (outside global unicast 2000::/3))") });
      expect(allowed(address, PRIVATE_OK), address).toBe(false);
    }
    // ::ffff:0:a.b.c.d (RFC 2765): loopback, the metadata service, private-use, as their IPv4 forms are
    expect(judgeAddress("::ffff:0:7f00:1", STRICT, NONE)).toEqual({ allowed: false, reason: expect.stringContaining("(IPv4-translated (SIIT) form of 127.0.0.1) is a special-purpose address (loopback)") });
    for (const address of ["[::ffff:0:a9fe:a9fe]", "::ffff:0:a00:1", "::ffff:0:192.168.1.1"]) expect(allowed(address), address).toBe(false);
    expect(allowed("::ffff:0:a00:1", PRIVATE_OK)).toBe(true);
    expect(allowed("::ffff:0:5db8:d822")).toBe(true); // 93.184.216.34
    // NAT64 of a public host stays allowed, though 64:ff9b::/96 lies outside global unicast
    expect(allowed("64:ff9b::5db8:d822")).toBe(true);
  });

  it("public IPv6 addresses are allowed", () => {
    for (const address of ["2606:4700:4700::1111", "2a00:1450:4001:80b::200e", "2001:200::1", "2003::1", "2620:4f:7fff::1"]) expect(judgeAddress(address, STRICT, NONE), address).toEqual({ allowed: true });
  });
});

describe("the host's own addresses, the allowlist", () => {
  it("refuses the host's own public addresses, in IPv4 and mapped form", () => {
    const own = ["93.184.216.34", "2606:4700::6810:84e5", "127.0.0.1"];
    expect(judgeAddress("93.184.216.34", STRICT, own)).toEqual({ allowed: false, reason: expect.stringContaining("address of this host") });
    expect(allowed("::ffff:93.184.216.34", STRICT, own)).toBe(false);
    expect(allowed("2606:4700:0:0::6810:84e5", STRICT, own)).toBe(false);
    expect(allowed("93.184.216.35", STRICT, own)).toBe(true);
  });

  it("the operator's allowlist overrides special ranges and own addresses, for exactly its entries", () => {
    const policy: AddressPolicy = { allowlist: ["127.0.0.1", "10.20.0.0/16", "fd00:1::/32"], allowPrivate: false };
    expect(allowed("127.0.0.1", policy)).toBe(true);
    expect(allowed("::ffff:127.0.0.1", policy)).toBe(true);
    expect(allowed("127.0.0.2", policy)).toBe(false);
    expect(allowed("10.20.255.1", policy)).toBe(true);
    expect(allowed("10.21.0.1", policy)).toBe(false);
    expect(allowed("fd00:1::5", policy)).toBe(true);
    expect(allowed("fd00:2::5", policy)).toBe(false);
    expect(allowed("93.184.216.34", { allowlist: ["93.184.216.34/32"], allowPrivate: false }, ["93.184.216.34"])).toBe(true);
  });

  it("an allowlist entry that is not an address or CIDR is refused by name", () => {
    expect(() => parseCidr("example.com")).toThrow(/"example.com" is not an IP address or CIDR/);
    expect(() => parseCidr("10.0.0.0/33")).toThrow(/not an IP address or CIDR/);
    expect(judgeAddress("not-an-ip", STRICT, NONE)).toEqual({ allowed: false, reason: expect.stringContaining("not an IP address") });
  });
});

describe("names of this host (localhost)", () => {
  it("localhost, *.localhost, with or without the final dot: refused unless every address it stands for (127.0.0.1 and ::1) is allowed", () => {
    for (const host of ["localhost", "localhost.", "api.localhost", "a.b.localhost."]) {
      expect(loopbackNameRefusal(host, STRICT), host).toMatch(/names this host \(loopback: 127\.0\.0\.1 and ::1\).*allow both in OUTBOUND_ALLOWLIST/);
      expect(loopbackNameRefusal(host, { allowlist: ["127.0.0.1"], allowPrivate: false }), host).toMatch(/; ::1 is not allowed/);
      expect(loopbackNameRefusal(host, { allowlist: ["::1"], allowPrivate: false }), host).toMatch(/; 127\.0\.0\.1 is not allowed/);
      expect(loopbackNameRefusal(host, { allowlist: ["127.0.0.1", "::1"], allowPrivate: false }), host).toBeNull();
      expect(loopbackNameRefusal(host, PRIVATE_OK), host).toBeNull();
    }
    for (const host of ["notlocalhost", "localhost.example.com", "example.com"]) expect(loopbackNameRefusal(host, STRICT), host).toBeNull();
  });
});
