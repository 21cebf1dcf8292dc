// Replay for audits across machine versions: each payment event is folded through today's machine;
// one it refuses is tried on the machine that decided it (the `machine_version` in its metadata,
// rebuilt from docs/machines/<hash>.json), and when that machine allowed it the step is "allowed by
// machine <hash> at the time", not an illegal transition. A refusal names its rule: no transition
// for the event in that status, or the guards that failed.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { MACHINE_VERSION, type MachineDefinition } from "../../machines/definition.js";
import { PaymentEvent } from "../../machines/events.js";
import { applyPaymentEvent, initialPaymentSnapshot, stateOf, type PaymentSnapshot, type PaymentState } from "../../machines/fold.js";
import { rebuildMachine, refusalOf, type RebuiltMachine } from "../../machines/machine-versions.js";
import { packageRoot } from "../package-root.js";
import type { RecordedEvent } from "../store/port.js";

/** The machine version recorded in an event's metadata; null for events appended before machine versions were recorded. */
export const machineVersionOf = (e: Pick<RecordedEvent, "metadata">): string | null => (typeof e.metadata.machine_version === "string" ? e.metadata.machine_version : null);

export interface AuditStep {
  revision: number;
  position: number;
  type: string;
  status_before: PaymentState["status"];
  allowed: boolean;
  /** The machine that decided the event (null: before machine versions). */
  machine_version: string | null;
  /** Today's machine refuses the event; this earlier machine, which decided it, allowed it. */
  allowed_by_machine?: string;
  /** Why it is refused (allowed false). */
  refusal?: { kind: "illegal_transition" | "guard_failed"; guards: string[]; message: string };
  state: PaymentState;
}

export interface AuditReplay {
  steps: AuditStep[];
  final: PaymentState;
  illegal: AuditStep[];
}

/** Definitions of machines by version: `hash -> definition`. */
export type MachineDefinitions = ReadonlyMap<string, MachineDefinition>;

/** The package's definitions of every machine version (docs/machines/<hash>.json), read once. */
let definitions: Map<string, MachineDefinition> | undefined;
const rebuilt = new WeakMap<MachineDefinition, RebuiltMachine>();

export function machineDefinitions(): MachineDefinitions {
  if (definitions) return definitions;
  const dir = join(packageRoot, "docs", "machines");
  const found = new Map<string, MachineDefinition>();
  let files: string[] = [];
  try {
    files = readdirSync(dir).filter((f) => /^[0-9a-f]{12}\.json$/.test(f));
  } catch {
    // no definitions shipped: only today's machine
  }
  for (const file of files) found.set(file.slice(0, 12), JSON.parse(readFileSync(join(dir, file), "utf8")) as MachineDefinition);
  return (definitions = found);
}

function machineOf(version: string, machines: MachineDefinitions): RebuiltMachine | null {
  const definition = machines.get(version);
  if (!definition) return null;
  const machine = rebuilt.get(definition) ?? rebuildMachine(definition);
  rebuilt.set(definition, machine);
  return machine;
}

/** One stored event on a snapshot: the next snapshot (and the earlier machine that allowed it, if today's refuses), or the refusal. */
export function auditStep(
  snapshot: PaymentSnapshot,
  e: Pick<RecordedEvent, "type" | "version" | "data" | "metadata">,
  machines: MachineDefinitions = machineDefinitions(),
): { next: PaymentSnapshot; allowed_by_machine?: string } | { refusal: NonNullable<AuditStep["refusal"]> } {
  const parsed = PaymentEvent.safeParse({ type: e.type, version: e.version, data: e.data });
  if (!parsed.success) {
    return { refusal: { kind: "illegal_transition", guards: [], message: `not a valid payment event: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}` } };
  }
  const next = applyPaymentEvent(snapshot, parsed.data);
  if (next) return { next };
  const version = machineVersionOf(e);
  const refusal = refusalOf(snapshot, parsed.data);
  if (version === null || version === MACHINE_VERSION) return { refusal };
  const earlier = machineOf(version, machines);
  if (!earlier) return { refusal: { ...refusal, message: `${refusal.message} (decided by machine ${version}, whose definition is not in docs/machines/)` } };
  const then = earlier.step(snapshot, parsed.data);
  return then ? { next: then, allowed_by_machine: version } : { refusal: { ...refusal, message: `${refusal.message}, and machine ${version} that decided it refuses it too` } };
}

/** A payment stream folded purely, each event checked as above; a refused event leaves the state as it was. */
export function auditReplay(events: readonly Pick<RecordedEvent, "type" | "version" | "data" | "metadata" | "revision" | "position">[], machines: MachineDefinitions = machineDefinitions()): AuditReplay {
  let snapshot = initialPaymentSnapshot;
  const steps: AuditStep[] = [];
  for (const e of events) {
    const before = snapshot.value;
    const step = auditStep(snapshot, e, machines);
    if ("next" in step) snapshot = step.next;
    steps.push({
      revision: e.revision,
      position: e.position,
      type: e.type,
      status_before: before,
      allowed: "next" in step,
      machine_version: machineVersionOf(e),
      ...("next" in step ? (step.allowed_by_machine ? { allowed_by_machine: step.allowed_by_machine } : {}) : { refusal: step.refusal }),
      state: stateOf(snapshot),
    });
  }
  return { steps, final: stateOf(snapshot), illegal: steps.filter((s) => !s.allowed) };
}
