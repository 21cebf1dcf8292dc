// The engine's commands, decorated: counted by command and outcome (ok, or the error code the API
// answers), timed, traced (a span per command, under the HTTP request's when there is one, with
// the payment id, the command and the outcome), and noted for the request's log line. The engine
// itself is not changed: createEngine's object is wrapped (and the processors' reports, through
// the processor port: ./instrument-ports.ts).
import type { Engine } from "../engine.js";
import { outcomeOf, type Metrics } from "./metrics.js";
import { ATTR, endSpan, tracer, withSpan } from "./tracing.js";
import { withoutSecrets } from "./redact.js";

/** What the log line of a request says of the command it ran. */
export interface RequestNote {
  /** null: none ran (a retry answered from its earlier try's events). */
  command: string | null;
  payment_id: string | null;
  /** null while the command runs. */
  outcome: string | null;
}

/**
 * Notes by request id: the HTTP layer registers a request (null) when it will log it, the command
 * it runs fills the note, and the log line takes it out.
 */
export type RequestNotes = Map<number, RequestNote | null>;

const COMMANDS = ["openAccount", "registerTerminal", "createIntent", "authorize", "collectPaymentMethod", "processPayment", "capture", "cancel", "refund", "saveCard"] as const;

/** The payment id a command was given (or answered), as the log and traces may write it. */
export const paymentIdOf = (value: unknown): string | null => {
  const id = typeof value === "string" ? value : (value as { payment_id?: unknown } | null | undefined)?.payment_id;
  return typeof id === "string" ? withoutSecrets(id) : null;
};

type Command<A, B, R> = (a: A, b: B) => Promise<R>;

/** Wraps one command (two arguments: its input and context, or a report's payment id and event). */
export function recordCommand<A, B, R>(name: string, run: Command<A, B, R>, metrics: Metrics, notes?: RequestNotes): Command<A, B, R> {
  const counts = new Map<string, ReturnType<Metrics["commands"]["labels"]>>();
  const count = (outcome: string) => {
    let child = counts.get(outcome);
    if (!child) counts.set(outcome, (child = metrics.commands.labels(name, outcome)));
    child.inc();
  };
  const duration = metrics.commandDuration.labels(name);
  const note = (b: B, paymentId: string | null, outcome: string | null, command: string | null = name) => {
    const requestId = (b as { request_id?: unknown } | undefined)?.request_id;
    if (notes && typeof requestId === "number" && notes.has(requestId)) notes.set(requestId, { command, payment_id: paymentId, outcome });
  };

  return async (a, b) => {
    // a retry answered with its earlier try's outcome, read from the events (Idempotent-Replayed):
    // no command ran, as for a kept answer sent again (counted among the replays, not here)
    let fromStore = false;
    const told = (b as { answeredFromStore?: () => void } | undefined)?.answeredFromStore;
    if (told) b = { ...b, answeredFromStore: () => ((fromStore = true), told()) };
    // noted as it starts too: a request answered before its command ends (the shutdown's deadline) logs it
    if (notes) note(b, paymentIdOf(a), null);
    const span = tracer.startSpan(`cardflow.command.${name}`);
    const recording = span.isRecording();
    const started = performance.now();
    try {
      const result = await (recording ? withSpan(span, () => run(a, b)) : run(a, b));
      duration.observe((performance.now() - started) / 1000);
      if (!fromStore) count("ok");
      const paymentId = notes || recording ? (paymentIdOf(a) ?? paymentIdOf(result)) : null;
      if (fromStore) note(b, paymentId, "replayed", null);
      else note(b, paymentId, "ok");
      if (recording) {
        span.setAttributes({ [ATTR.command]: name, ...(paymentId ? { [ATTR.paymentId]: paymentId } : {}) });
        endSpan(span, "ok");
      }
      return result;
    } catch (error) {
      duration.observe((performance.now() - started) / 1000);
      const outcome = outcomeOf(error);
      count(outcome);
      const paymentId = paymentIdOf(a);
      note(b, paymentId, outcome);
      if (recording) {
        span.setAttributes({ [ATTR.command]: name, ...(paymentId ? { [ATTR.paymentId]: paymentId } : {}) });
        endSpan(span, outcome, error);
      } else span.end();
      throw error;
    }
  };
}

/** The engine with its commands counted, timed, traced and noted; everything else as it is. */
export function instrumentEngine(engine: Engine, metrics: Metrics, notes?: RequestNotes): Engine {
  const decorated: Engine = { ...engine };
  for (const name of COMMANDS) (decorated as Record<string, unknown>)[name] = recordCommand(name, engine[name] as Command<unknown, unknown, unknown>, metrics, notes);
  return decorated;
}
