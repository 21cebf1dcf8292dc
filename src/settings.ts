// How a setting is read from the environment: a number, one of a few words, on or off. Each
// refusal names the variable, what it takes and what it got (src/config.ts and every group of
// settings read theirs here).
import { ConfigurationError } from "./data-directory.js";

/** Unset, or only spaces: the setting's default. */
export const isUnset = (raw: string | undefined) => raw === undefined || raw.trim() === "";

/**
 * A number as a setting or an option is written: decimal digits, a fraction maybe; else NaN. Not
 * hex, an exponent, a sign, nor spaces around it (PORT=" 8080"): Number() would read them all.
 */
export const readDecimal = (raw: string): number => (/^\d+(\.\d+)?$/.test(raw) ? Number(raw) : NaN);

/**
 * A setting's number from `min` (below it the setting would turn off what it is for) to `max`, a
 * whole one unless `integer: false` (hours: 1.5 is 90 minutes; half a port, connection or
 * millisecond is nothing meant); `expected` says so. Every numeric setting is read here, adapters' too.
 */
export function envNumber(env: NodeJS.ProcessEnv, name: string, fallback: number, { min = 0, max = Infinity, integer = true, expected = "a whole number, 0 or more" } = {}): number {
  const raw = env[name];
  if (raw === undefined || isUnset(raw)) return fallback;
  const value = readDecimal(raw);
  if (!Number.isFinite(value) || value < min || value > max || (integer && !Number.isInteger(value))) throw new ConfigurationError(`${name}: expected ${expected}, got ${JSON.stringify(raw)}`);
  return value;
}

/** The longest delay a timer holds: Node runs a longer one at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** One of `values`, as written; unset or empty: `fallback`; anything else refused naming the variable and its values. */
export function envChoice<T extends string>(env: NodeJS.ProcessEnv, name: string, values: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!(values as readonly string[]).includes(raw)) throw new ConfigurationError(`${name}: expected one of ${values.join(", ")}, got ${JSON.stringify(raw)}`);
  return raw as T;
}

const ON = ["on", "1", "true", "yes"];
const OFF = ["off", "0", "false", "no"];

/** Every on/off setting (SANDBOX, WEBHOOK_ALLOW_PRIVATE): on, 1, true, yes or off, 0, false, no (any case); unset or empty: `fallback`; anything else refused. */
export function envBoolean(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const value = (env[name] ?? "").trim().toLowerCase();
  if (value === "") return fallback;
  if (ON.includes(value)) return true;
  if (OFF.includes(value)) return false;
  throw new ConfigurationError(`${name}: expected on or off (on: ${ON.join(", ")}; off: ${OFF.join(", ")}), got ${JSON.stringify(env[name])}`);
}

