// The reconciler: closes what a crash left open. An attempt without an outcome older than the
// grace period is looked up at the processor (ProcessorPort.lookup): its recorded answer becomes
// the outcome events, or AttemptAbandoned when the call never reached the processor (the command
// may then be tried again). A payment left waiting for a processor A terminal past the blocking
// auth's deadline (a restart lost the waiting request and the simulated terminal) gets the
// terminal's real outcome, or USER_TIMEOUT. Each resolution is appended with the revision it was
// decided on, so with several processes reconciling, the first append wins and the others find
// the attempt closed.
//
// Open attempts are found by an index folded from the store's global log: an attempt event opens
// one; any later event of that payment closes it (the machine allows nothing else while one is in
// flight). The index is kept in memory and caught up from where it stopped on every pass.
import { ATTEMPT_TYPES, type AttemptType, type PaymentEvent } from "../../machines/events.js";
import { hasTag } from "../../machines/fold.js";
import type { RecordedEvent } from "../store/port.js";
import type { Core } from "./core.js";
import { followUp } from "./follow-up.js";
import { abandoned, acceptedOrAbandoned, authorizationEvents, outcomeEvents, shopperTimedOut } from "./outcomes.js";
import { commandClock, type CommandContext, type Loaded } from "./payment-streams.js";

export interface ReconcileOptions {
  /** Report what would be appended, append nothing. */
  dryRun?: boolean;
  /** Override the engine's grace period for this pass (0: every open attempt). */
  graceMs?: number;
}

export interface Resolution {
  payment_id: string;
  /** The open attempt's type, or "TerminalWait" for a terminal collection past its deadline. */
  open: AttemptType | "TerminalWait";
  attempt_id: string | null;
  /** What the processor said: its recorded call, "never_received", or "still_collecting". */
  processor: string;
  /** The events appended (or that would be, in a dry run); empty when another process closed it first. */
  appended: string[];
}

export interface ReconcileReport {
  /** Open attempts and terminal waits older than their deadline, found in this pass. */
  found: number;
  resolved: Resolution[];
  /** Still open but younger than the grace period. */
  waiting: number;
  /** Age of the oldest attempt or terminal wait still open after the pass (0 when none): the backlog's age. */
  oldest_open_ms: number;
  dry_run: boolean;
  duration_ms: number;
}

interface Open {
  payment_id: string;
  kind: AttemptType | "TerminalWait";
  since: number;
}

const ATTEMPTS = new Set<string>(ATTEMPT_TYPES);

export function createReconciler(core: Core) {
  const open = new Map<string, Open>();
  let position = 0;

  function index(e: RecordedEvent) {
    if (!e.stream.startsWith("payment-")) return;
    const payment_id = e.stream.slice("payment-".length);
    open.delete(payment_id);
    const since = Date.parse(e.metadata.timestamp);
    if (ATTEMPTS.has(e.type)) open.set(payment_id, { payment_id, kind: e.type as AttemptType, since });
    // the machine takes TerminalAuthorizationStarted only for a processor A terminal (isProcessorATerminal)
    else if (e.type === "TerminalAuthorizationStarted") open.set(payment_id, { payment_id, kind: "TerminalWait", since });
  }

  /** Stores make positions visible in order, without gaps that fill later (src/store/port.ts). */
  async function catchUp() {
    for (;;) {
      const batch = await core.store.readAll({ after: position, maxCount: 5_000 });
      for (const e of batch) index(e);
      if (batch.length === 0) return;
      position = batch[batch.length - 1]!.position;
    }
  }

  async function resolve(item: Open, dryRun: boolean, now: number): Promise<Resolution | null> {
    let resolution: Resolution | null = null;
    const ctx: CommandContext = commandClock(core.clock, { actor: "reconciler" });
    await core.payments.onPayment(null, item.payment_id, async (loaded) => {
      resolution = null;
      const decided = await decide(loaded, now - item.since >= core.syncAuthTimeoutMs);
      if (!decided) return loaded; // closed meanwhile (by its command or another process)
      resolution = { payment_id: item.payment_id, ...decided.resolution, appended: decided.events.map((e) => e.type) };
      if (dryRun) return loaded;
      await decided.before?.();
      const after = await core.payments.append(item.payment_id, loaded, decided.events, ctx, "reconcile");
      return followUp(core, item.payment_id, after, ctx);
    });
    return resolution;
  }

  /** What to append for a payment's open attempt or overdue terminal, from the processor's record. */
  async function decide(loaded: Loaded, pastTerminalDeadline: boolean): Promise<{ resolution: Omit<Resolution, "payment_id" | "appended">; events: PaymentEvent[]; before?: () => Promise<void> } | null> {
    const payment = core.viewOf(loaded);
    const port = core.processorOf(loaded);
    const attempt = payment.attempt;
    if (attempt) {
      const { attempt_id } = attempt.data;
      const recorded = await port.lookup(attempt_id);
      const resolution = { open: attempt.type, attempt_id, processor: recorded === "never_received" ? recorded : recorded.call };
      if (recorded === "never_received") return { resolution, events: [abandoned(attempt_id, "never_received")] };
      const events = acceptedOrAbandoned(loaded.snapshot, attempt_id, outcomeEvents(payment, recorded));
      // a terminal that started and is still collecting: past the blocking auth's deadline, that is over
      if (pastTerminalDeadline && attempt.type === "TerminalAuthorizationAttempted" && events.length === 1) {
        const terminal_id = attempt.data.terminal_id;
        return { resolution: { ...resolution, processor: "still_collecting" }, events: [...events, shopperTimedOut()], before: () => port.cancelTerminalAuthorization({ payment, terminal_id }) };
      }
      return { resolution, events };
    }
    const terminal = payment.terminal;
    if (!terminal || terminal.terminal_type === "B_reader" || !hasTag(loaded.snapshot, "collecting_card")) return null;
    const recorded = terminal.attempt_id ? await port.lookup(terminal.attempt_id) : "never_received";
    const resolution = { open: "TerminalWait" as const, attempt_id: terminal.attempt_id ?? null };
    if (recorded !== "never_received" && recorded.call === "start_terminal" && recorded.outcome) {
      return { resolution: { ...resolution, processor: "start_terminal" }, events: authorizationEvents(recorded.outcome) };
    }
    const cancel = () => port.cancelTerminalAuthorization({ payment, terminal_id: terminal.terminal_id });
    return { resolution: { ...resolution, processor: "still_collecting" }, events: [shopperTimedOut()], before: cancel };
  }

  /** One pass: catch the index up, resolve every open attempt older than the grace period. */
  async function reconcile(options: ReconcileOptions = {}): Promise<ReconcileReport> {
    const started = performance.now();
    const dryRun = options.dryRun ?? false;
    const graceMs = options.graceMs ?? core.reconcileGraceMs;
    await catchUp();
    const now = core.clock.now();
    const due = [...open.values()].filter((o) => now - o.since >= (o.kind === "TerminalWait" ? Math.max(graceMs, core.syncAuthTimeoutMs) : graceMs));
    const resolved: Resolution[] = [];
    for (const item of due) {
      const r = await resolve(item, dryRun, now);
      if (r) resolved.push(r);
      if (!dryRun) open.delete(item.payment_id);
    }
    if (!dryRun) await catchUp();
    return { found: due.length, resolved, waiting: open.size, oldest_open_ms: [...open.values()].reduce((age, o) => Math.max(age, now - o.since), 0), dry_run: dryRun, duration_ms: Math.round(performance.now() - started) };
  }

  return { reconcile };
}

export type Reconciler = ReturnType<typeof createReconciler>;
