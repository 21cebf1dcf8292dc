// Settings only the sandbox reads. Given in production (an env file shared with a sandbox) they do
// nothing: the start says so once, in the log, rather than refusing, so an operator does not take
// them for settings in force.
import type { Logger } from "pino";
import { isUnset } from "../settings.js";

/** The simulators' settings (src/config.ts) and the chaos run's seeded defect (src/seeded-defects.ts). */
export const SANDBOX_ONLY_SETTINGS = ["SIM_CAPTURES", "SIM_CAPTURE_SETTLE_MS", "SIM_PROCESSOR_LATENCY_MS", "CARDFLOW_SEEDED_DEFECT"] as const;

/** Outside the sandbox, one warning naming each sandbox-only setting that is set (blank is unset, as for every setting). */
export function warnSandboxOnly({ sandbox }: { sandbox: boolean }, env: NodeJS.ProcessEnv, logger: Logger): void {
  const set = SANDBOX_ONLY_SETTINGS.filter((name) => !isUnset(env[name]));
  if (sandbox || set.length === 0) return;
  logger.warn({ settings: set }, `${set.join(", ")}: set, but ${set.length === 1 ? "a sandbox-only setting" : "sandbox-only settings"}: no effect outside the sandbox (this process runs production)`);
}
