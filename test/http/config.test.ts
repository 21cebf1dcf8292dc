// The configuration's security rules, one by one (the refusals at start with real processes are in
// test/processors/production.test.ts): modes from SANDBOX and NODE_ENV, TRUST_PROXY as addresses or
// CIDRs only, the outbound allowlist checked, WEBHOOK_ALLOW_PRIVATE only in the sandbox, numbers
// that would turn off what they are for refused.
import { describe, expect, it } from "vitest";
import { ConfigurationError, configFromEnv, withoutPassword } from "../../src/config.js";
import { urlOf } from "../../src/serve/config.js";

const env = (vars: Record<string, string>) => configFromEnv({ DATA_DIR: "/tmp/cardflow-config-test", ...vars });

describe("configuration", () => {
  it("a URL's password is masked in every message, however it is written (/, #, ?, @ unencoded too)", () => {
    for (const password of ["S3cret", "S3c/ret", "S3c#ret", "S3c?ret", "S3c@ret", "p:w"]) {
      const masked = withoutPassword(`postgres://alice:${password}@127.0.0.1:4851/db`);
      expect(masked, password).toBe("postgres://alice:***@127.0.0.1:4851/db");
    }
    expect(withoutPassword("postgres://u@h:5432/db?password=x&a=1")).toBe("postgres://u@h:5432/db?password=***&a=1");
    expect(withoutPassword("postgres://h:5432/db")).toBe("postgres://h:5432/db");
    expect(withoutPassword("kurrentdb://admin:changeit@127.0.0.1:2113")).toBe("kurrentdb://admin:***@127.0.0.1:2113");
  });

  it("the sandbox unless NODE_ENV=production; SANDBOX decides when set", () => {
    expect(env({}).sandbox).toBe(true);
    expect(env({ NODE_ENV: "production" }).sandbox).toBe(false);
    expect(env({ NODE_ENV: "production", SANDBOX: "on" }).sandbox).toBe(true);
    expect(env({ SANDBOX: "off" }).sandbox).toBe(false);
    expect(() => env({ SANDBOX: "maybe" })).toThrow(ConfigurationError);
    // production written another way is refused, not run as the sandbox; SANDBOX set or not
    for (const nearMiss of ["Production", "PRODUCTION", "production ", " production", "Production\n"]) {
      for (const sandbox of [{}, { SANDBOX: "off" }] as Record<string, string>[]) expect(() => env({ NODE_ENV: nearMiss, ...sandbox }), JSON.stringify(nearMiss)).toThrow(`NODE_ENV: expected production written exactly (lower case, no spaces), got ${JSON.stringify(nearMiss)}`);
    }
    for (const other of ["development", "test", "prod", ""]) expect(env({ NODE_ENV: other }).sandbox, other).toBe(true);
  });

  it("every on/off variable takes the same forms (on, 1, true, yes; off, 0, false, no; any case), anything else refused naming the variable and its values", () => {
    for (const on of ["on", "1", "true", "yes", "YES", " On "]) {
      expect(env({ NODE_ENV: "production", SANDBOX: on }).sandbox, on).toBe(true);
      expect(env({ WEBHOOK_ALLOW_PRIVATE: on }).outbound.allowPrivate, on).toBe(true);
      expect(() => env({ SANDBOX: "off", WEBHOOK_ALLOW_PRIVATE: on }), on).toThrow(/^WEBHOOK_ALLOW_PRIVATE: only in the sandbox/);
    }
    for (const off of ["off", "0", "false", "no", "NO"]) {
      expect(env({ SANDBOX: off }).sandbox, off).toBe(false);
      expect(env({ WEBHOOK_ALLOW_PRIVATE: off }).outbound.allowPrivate, off).toBe(false);
      expect(env({ SANDBOX: "off", WEBHOOK_ALLOW_PRIVATE: off }).outbound.allowPrivate, off).toBe(false);
    }
    for (const name of ["SANDBOX", "WEBHOOK_ALLOW_PRIVATE"]) {
      for (const bad of ["2", "maybe", "enabled"]) {
        expect(() => env({ [name]: bad }), `${name}=${bad}`).toThrow(`${name}: expected on or off (on: on, 1, true, yes; off: off, 0, false, no), got ${JSON.stringify(bad)}`);
      }
    }
  });

  it("SIM_CAPTURES and LOG_LEVEL: one of their values, anything else refused naming the variable and its values", () => {
    expect(env({}).captures).toBe("immediate");
    expect(env({ SIM_CAPTURES: "requested" }).captures).toBe("requested");
    expect(env({ SIM_CAPTURES: "immediate" }).captures).toBe("immediate");
    for (const bad of ["foo", "Requested", "true"]) expect(() => env({ SIM_CAPTURES: bad }), bad).toThrow(`SIM_CAPTURES: expected one of immediate, requested, got ${JSON.stringify(bad)}`);
    expect(env({}).logLevel).toBe("info");
    expect(() => env({ LOG_LEVEL: "verbose" })).toThrow('LOG_LEVEL: expected one of fatal, error, warn, info, debug, trace, silent, got "verbose"');
  });

  it("TRUST_PROXY: a list of addresses or CIDRs; true, a hop count or a name is refused", () => {
    expect(env({}).trustProxy).toBe(false);
    expect(env({ TRUST_PROXY: "10.0.0.0/8, 192.0.2.7 ,fd00::/8" }).trustProxy).toEqual(["10.0.0.0/8", "192.0.2.7", "fd00::/8"]);
    for (const bad of ["true", "2", "lb.internal", "10.0.0.0/40"]) expect(() => env({ TRUST_PROXY: bad }), bad).toThrow(/^TRUST_PROXY: /);
    // an empty entry (a comma at an end, or two together): refused, not dropped
    for (const gap of ["10.0.0.0/8,", ",10.0.0.0/8", "10.0.0.0/8,,192.0.2.7", "10.0.0.0/8, ,192.0.2.7"]) expect(() => env({ TRUST_PROXY: gap }), gap).toThrow(`TRUST_PROXY: ${JSON.stringify(gap)} has an empty entry`);
  });

  it("OUTBOUND_ALLOWLIST entries are checked; WEBHOOK_ALLOW_PRIVATE only in the sandbox", () => {
    expect(env({ OUTBOUND_ALLOWLIST: "127.0.0.1,10.1.0.0/16" }).outbound).toEqual({ allowlist: ["127.0.0.1", "10.1.0.0/16"], allowPrivate: false, caFile: null });
    expect(() => env({ OUTBOUND_ALLOWLIST: "processor.example" })).toThrow(/^OUTBOUND_ALLOWLIST: "processor.example" is not an IP address or CIDR/);
    expect(() => env({ OUTBOUND_ALLOWLIST: "127.0.0.1," })).toThrow('OUTBOUND_ALLOWLIST: "127.0.0.1," has an empty entry');
    expect(env({ OUTBOUND_ALLOWLIST: " " }).outbound.allowlist).toEqual([]);
    expect(env({ WEBHOOK_ALLOW_PRIVATE: "1" }).outbound.allowPrivate).toBe(true);
    expect(() => env({ WEBHOOK_ALLOW_PRIVATE: "1", SANDBOX: "off" })).toThrow(/^WEBHOOK_ALLOW_PRIVATE: only in the sandbox/);
  });

  it("a number is written in decimal digits: hex, an exponent, a sign or spaces around it, which Number() would read, are refused naming the variable, in every group of settings", async () => {
    const { serveConfigFromEnv } = await import("../../src/serve/config.js");
    const { webhookConfigFromEnv } = await import("../../src/webhooks/config.js");
    for (const bad of ["0x10", "1e3", "0b1", "+80", "Infinity"]) {
      expect(() => env({ PORT: bad }), bad).toThrow(`PORT: expected a port number from 0 to 65535, got ${JSON.stringify(bad)}`);
      expect(() => env({ PG_POOL_SIZE: bad }), bad).toThrow(/^PG_POOL_SIZE: expected a whole number of connections/);
      expect(() => serveConfigFromEnv({ METRICS_PORT: bad }), bad).toThrow(/^METRICS_PORT: expected a whole number from 0 to 65535/);
      expect(() => webhookConfigFromEnv({ WEBHOOK_TIMEOUT_MS: bad }), bad).toThrow(/^WEBHOOK_TIMEOUT_MS: expected whole milliseconds from 1 to 2147483647/);
    }
    // spaces around the digits are no decimal digits either (Number() read " 8081" as 8081); a blank setting is unset
    for (const padded of [" 8081", "8081 ", " 8081 ", "\t8081", "8081\n", "80 81"]) {
      expect(() => env({ PORT: padded }), JSON.stringify(padded)).toThrow(`PORT: expected a port number from 0 to 65535, got ${JSON.stringify(padded)}`);
      expect(() => env({ IDEMPOTENCY_TTL_HOURS: padded }), JSON.stringify(padded)).toThrow(/^IDEMPOTENCY_TTL_HOURS: expected from 1 to 8760 hours/);
      expect(() => serveConfigFromEnv({ METRICS_PORT: padded }), JSON.stringify(padded)).toThrow(/^METRICS_PORT: expected a whole number from 0 to 65535/);
      expect(() => webhookConfigFromEnv({ WEBHOOK_TIMEOUT_MS: padded }), JSON.stringify(padded)).toThrow(/^WEBHOOK_TIMEOUT_MS: expected whole milliseconds/);
    }
    expect(env({ PORT: "8081" }).port).toBe(8081);
    expect(env({ PORT: "  " }).port).toBe(8080);
    expect(serveConfigFromEnv({ METRICS_PORT: "9465" }).metricsPort).toBe(9465);
    // the stop's timers: past a timer's longest Node would run them at once (no grace at all)
    expect(() => serveConfigFromEnv({ SHUTDOWN_GRACE_MS: "3000000000", SHUTDOWN_DEADLINE_MS: "3000001000" })).toThrow("SHUTDOWN_GRACE_MS: expected a whole number from 0 to 2147483647, got \"3000000000\"");
    expect(() => serveConfigFromEnv({ SHUTDOWN_DEADLINE_MS: "2147483648" })).toThrow(/^SHUTDOWN_DEADLINE_MS: expected a whole number from 0 to 2147483647/);
    expect(webhookConfigFromEnv({ WEBHOOK_TIMEOUT_MS: "2500" }).timeoutMs).toBe(2500);
  });

  it("a setting that counts or times is a whole number: 1.5 refused naming the setting and the value, in every group of settings; hours take a fraction", async () => {
    const { serveConfigFromEnv } = await import("../../src/serve/config.js");
    const { webhookConfigFromEnv } = await import("../../src/webhooks/config.js");
    const groups: [(vars: Record<string, string>) => unknown, string[]][] = [
      [env, ["PORT", "PG_POOL_SIZE", "SQLITE_BUSY_TIMEOUT_MS", "SYNC_AUTH_TIMEOUT_MS", "RECONCILE_GRACE_MS", "RECONCILE_INTERVAL_MS", "IDEMPOTENCY_MAX_KEYS_PER_ACCOUNT", "SIM_CAPTURE_SETTLE_MS", "SIM_PROCESSOR_LATENCY_MS"]],
      [serveConfigFromEnv, ["METRICS_PORT", "SHUTDOWN_GRACE_MS", "READY_MAX_LAG_SECONDS", "STORE_START_WAIT_SECONDS"]],
      [webhookConfigFromEnv, ["WEBHOOK_TIMEOUT_MS", "WEBHOOK_LEASE_MS", "WEBHOOK_RETRY_BASE_MS", "WEBHOOK_RETRY_MAX_MS", "WEBHOOK_MAX_ENDPOINTS_PER_ACCOUNT", "WEBHOOK_ACCOUNT_CONCURRENCY"]],
    ];
    for (const [read, names] of groups) {
      for (const name of names) {
        for (const bad of ["1.5", "30000.5"]) expect(() => read({ [name]: bad }), `${name}=${bad}`).toThrow(new RegExp(`^${name}: expected (a |whole ).*, got ${JSON.stringify(bad).replace(".", "\\.")}$`));
        expect(() => read({ [name]: "30" }), name).not.toThrow();
      }
    }
    // hours: a fraction is a time (1.5 h is 90 minutes)
    expect(env({ IDEMPOTENCY_TTL_HOURS: "1.5" }).idempotencyTtlMs).toBe(5_400_000);
    expect(webhookConfigFromEnv({ WEBHOOK_RETRY_HORIZON_HOURS: "1.5" }).backoff.horizonMs).toBe(5_400_000);
  });

  it("the webhook settings: milliseconds are whole and within a timer's longest (a timeout past it gave up at once), counts whole", async () => {
    const { webhookConfigFromEnv } = await import("../../src/webhooks/config.js");
    for (const name of ["WEBHOOK_TIMEOUT_MS", "WEBHOOK_LEASE_MS", "WEBHOOK_RETRY_BASE_MS", "WEBHOOK_RETRY_MAX_MS"]) {
      for (const bad of ["3000000000", "2147483648", "0", "1.5"]) expect(() => webhookConfigFromEnv({ [name]: bad }), `${name}=${bad}`).toThrow(`${name}: expected whole milliseconds from 1 to 2147483647, got "${bad}"`);
      expect(() => webhookConfigFromEnv({ [name]: "2147483647" })).not.toThrow();
    }
    for (const name of ["WEBHOOK_MAX_ENDPOINTS_PER_ACCOUNT", "WEBHOOK_ACCOUNT_CONCURRENCY"]) {
      for (const bad of ["0.5", "0"]) expect(() => webhookConfigFromEnv({ [name]: bad }), `${name}=${bad}`).toThrow(`${name}: expected a whole number, 1 or more, got "${bad}"`);
    }
    expect(() => webhookConfigFromEnv({ WEBHOOK_RETRY_HORIZON_HOURS: "0" })).toThrow(/WEBHOOK_RETRY_HORIZON_HOURS: expected a positive number of hours/);
    expect(webhookConfigFromEnv({ WEBHOOK_RETRY_HORIZON_HOURS: "0.5", WEBHOOK_ACCOUNT_CONCURRENCY: "4" })).toMatchObject({ backoff: { horizonMs: 1_800_000 }, accountConcurrency: 4 });
  });

  it("PG_POOL_SIZE: a whole number of connections from 1 to 100; unset, the store's default", () => {
    expect(env({}).databasePoolSize).toBeNull();
    expect(env({ PG_POOL_SIZE: "6" }).databasePoolSize).toBe(6);
    for (const bad of ["0", "2.5", "many", "101"]) expect(() => env({ PG_POOL_SIZE: bad }), bad).toThrow(/^PG_POOL_SIZE: expected a whole number of connections from 1 to 100/);
  });

  it("settings that would turn off what they are for are refused: idempotency answers kept under an hour, no Idempotency-Key allowed, no wait for a terminal, a reconciler without pause", () => {
    expect(env({ IDEMPOTENCY_TTL_HOURS: "1" }).idempotencyTtlMs).toBe(3_600_000);
    expect(env({ IDEMPOTENCY_TTL_HOURS: "8760" }).idempotencyTtlMs).toBe(8_760 * 3_600_000);
    // past a year refused: at 99999999999 hours the keeping time's start was no date, and every keyed request answered 500
    for (const bad of ["0", "0.5", "-1", "a day", "8761", "99999999999"]) expect(() => env({ IDEMPOTENCY_TTL_HOURS: bad }), bad).toThrow(`IDEMPOTENCY_TTL_HOURS: expected from 1 to 8760 hours (shorter, a client's retry with the same Idempotency-Key could act again; 8760 is a year), got ${JSON.stringify(bad)}`);
    for (const name of ["SIM_CAPTURE_SETTLE_MS", "SIM_PROCESSOR_LATENCY_MS"]) expect(() => env({ [name]: "3000000000" }), name).toThrow(`${name}: expected whole milliseconds from 0 to 2147483647, got "3000000000"`);
    expect(() => env({ IDEMPOTENCY_MAX_KEYS_PER_ACCOUNT: "0" })).toThrow(/^IDEMPOTENCY_MAX_KEYS_PER_ACCOUNT: expected a whole number, at least 1 /);
    expect(() => env({ SYNC_AUTH_TIMEOUT_MS: "0" })).toThrow(/^SYNC_AUTH_TIMEOUT_MS: expected whole milliseconds, 1 or more/);
    expect(() => env({ RECONCILE_INTERVAL_MS: "0" })).toThrow(/^RECONCILE_INTERVAL_MS: expected whole milliseconds, 1 or more/);
    expect(() => env({ RECONCILE_INTERVAL_MS: String(2 ** 31) })).toThrow(/^RECONCILE_INTERVAL_MS: expected whole milliseconds, 1 or more and at most 2147483647/);
    // what SQLite's library takes: whole milliseconds up to a 32-bit integer, said as the variable
    expect(env({ SQLITE_BUSY_TIMEOUT_MS: "0" }).sqliteBusyTimeoutMs).toBe(0);
    for (const bad of ["1.5", "99999999999", "-1", "5s"]) expect(() => env({ SQLITE_BUSY_TIMEOUT_MS: bad }), bad).toThrow(`SQLITE_BUSY_TIMEOUT_MS: expected a whole number of milliseconds from 0 to 2147483647, got ${JSON.stringify(bad)}`);
    // 0 still means what it says where it can: the reconciler looks at every open attempt
    expect(env({ RECONCILE_GRACE_MS: "0" }).reconcileGraceMs).toBe(0);
  });
});

describe("the address the start banner and the metrics URL tell", () => {
  it("is localhost for a listener on every address or on loopback, else the address listened on (an IPv6 one in brackets)", () => {
    expect(urlOf("0.0.0.0", 3000)).toBe("http://localhost:3000");
    expect(urlOf("::", 3000)).toBe("http://localhost:3000");
    expect(urlOf("127.0.0.1", 3000)).toBe("http://localhost:3000");
    expect(urlOf("::1", 9464, "/metrics")).toBe("http://localhost:9464/metrics");
    // localhost does not reach a listener on another of the host's addresses
    expect(urlOf("10.1.2.3", 3000)).toBe("http://10.1.2.3:3000");
    expect(urlOf("fd00::7", 9464, "/metrics")).toBe("http://[fd00::7]:9464/metrics");
    expect(urlOf("api.internal", 80)).toBe("http://api.internal:80");
  });
});
