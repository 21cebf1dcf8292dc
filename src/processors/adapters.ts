// Which processors a service runs on. The sandbox: the simulators (test cards, /sim). Production:
// the real adapters of PROCESSORS_MODULE, one ProcessorPort for each processor cardflow routes to
// (A: its terminals and card-not-present accounts; B: its reader and accounts), and nothing
// simulated; the service refuses to start until every one is there. `npm start` and
// `cardflow reconcile` choose alike, so the reconciler asks the processors the payments used.
//
// A PROCESSORS_MODULE exports `createProcessors(context)`, by that name, answering
// `{ A, B, connect?, close? }`: `connect(report)` receives the function that records outcomes the
// processor reports later (a terminal's, a settled capture), as the simulators do.
import { existsSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { Logger } from "pino";
import type { Clock } from "../clock.js";
import { ConfigurationError, outboundOf, type ServiceConfig } from "../config.js";
import { InvalidRequest } from "../errors.js";
import type { Ids } from "../ids.js";
import type { IdSequences } from "../store/port/ids.js";
import { prepareOnce, type ReadModelStore } from "../store/port.js";
import type { Outbound } from "../outbound/client.js";
import { portsProblem, ROUTED_PROCESSORS, type ProcessorPort, type ProcessorReport, type Processors } from "./port.js";
import { fileSide, processorSideIn } from "./processor-side.js";
import { markOrRefuseProductionStore, markSandboxesStopped, watchProductionMark, type ProductionStore, type ProductionWatch } from "./production-mark.js";
import { createSimulators, type Simulators } from "./simulator.js";

/** What an adapters module is given: the guarded client for its HTTP calls, time, ids, the environment, the log. */
export interface AdapterContext {
  outbound: Outbound;
  clock: Clock;
  ids: Ids;
  env: NodeJS.ProcessEnv;
  /** The server's pino logger (JSON lines on stdout), where an operator looks for processor failures. */
  logger: Logger;
  /** Where an adapter keeps its own operational state (a poll's cursor) across restarts. */
  state: AdapterState;
}

/**
 * An adapter's own operational state by key (the example adapter's poll cursor), in the read-model
 * store: every process on the store, and the next start, reads what the last one wrote, so what a
 * processor reported while no process ran is still read. Not events: it is no fact of a payment.
 */
export interface AdapterState {
  get(key: string): Promise<string | null>;
  set(key: string, value: string): Promise<void>;
}

const ADAPTER_STATE = "processor_adapter_state";
const prepareAdapterState = prepareOnce(ADAPTER_STATE, { version: 1, table: { columns: {}, indexes: [], row: () => ({}) } });

export function adapterState(readModels: ReadModelStore): AdapterState {
  return {
    async get(key) {
      await prepareAdapterState(readModels);
      return (await readModels.get<{ value: string }>(ADAPTER_STATE, key))?.value ?? null;
    },
    async set(key, value) {
      await prepareAdapterState(readModels);
      await readModels.commitBatch([{ projection: ADAPTER_STATE, docs: [{ key, doc: { value } }], checkpoint: 0 }]);
    },
  };
}

/** State kept by this process only (a caller with no read-model store). */
export function memoryAdapterState(): AdapterState {
  const kept = new Map<string, string>();
  return { get: async (key) => kept.get(key) ?? null, set: async (key, value) => void kept.set(key, value) };
}

export interface ProcessorAdapters {
  A?: ProcessorPort;
  B?: ProcessorPort;
  /** Receives the function through which the adapters report late outcomes. */
  connect?(report: ProcessorReport): void;
  close?(): void | Promise<void>;
}

export type CreateProcessors = (context: AdapterContext) => ProcessorAdapters | Promise<ProcessorAdapters>;

/**
 * Adapters by processor name (as a PROCESSORS_MODULE's createProcessors returns them) as the
 * engine's Processors: `createEngine({ processors: processorsFromAdapters(adapters) })`. Checked at
 * once: a processor without an adapter, or an adapter lacking a call, is a TypeError.
 */
export function processorsFromAdapters(adapters: ProcessorAdapters, refuse = (problem: string): Error => new TypeError(`processorsFromAdapters: ${problem}`)): Processors {
  const problem = portsProblem((p) => adapters?.[p]);
  if (problem) throw refuse(problem);
  return { get: (processor) => adapters[processor]!, connect: (report) => adapters.connect?.(report) };
}

/** The processors of a running service, and what to close when it stops. */
export interface ServiceProcessors {
  processors: Processors;
  /** Only in the sandbox. */
  simulators?: Simulators;
  /** "sandbox" or "production (adapters: <module>)", for the start log. */
  mode: string;
  /** A sandbox's watch of the production count (given `onProduction`): checked before each reconciler pass. */
  watch?: ProductionWatch;
  close(): Promise<void>;
}

/**
 * A PROCESSORS_MODULE's checkSettings (optional): its settings judged before the service opens any
 * store, so a refusal writes nothing (createProcessors needs the store: its `state`).
 */
export type CheckSettings = (context: Pick<AdapterContext, "env" | "outbound">) => void | Promise<void>;

/** The createProcessors (and checkSettings) of a PROCESSORS_MODULE, or a ConfigurationError saying why there is none. */
async function importProcessorsModule(specifier: string): Promise<{ create: CreateProcessors; checkSettings?: CheckSettings }> {
  // a path (./x.js, /abs/x.js, or a file that exists from here: node_modules/cardflow/dist/...), else a package
  const isPath = specifier.startsWith(".") || isAbsolute(specifier) || existsSync(resolve(specifier));
  const url = isPath ? pathToFileURL(resolve(specifier)).href : specifier;
  let loaded: { createProcessors?: unknown; default?: unknown; checkSettings?: unknown };
  try {
    loaded = await import(url);
  } catch (error) {
    throw new ConfigurationError(`PROCESSORS_MODULE: cannot load ${specifier} (${(error as Error).message})`);
  }
  // the named export only: a default one is whatever a package exports first (PROCESSORS_MODULE=fastify would call fastify)
  const create = loaded.createProcessors as CreateProcessors | undefined;
  if (typeof create !== "function") throw new ConfigurationError(`PROCESSORS_MODULE: ${specifier} exports no createProcessors(context) function${loaded.default === undefined ? "" : " (a default export is not taken: export it by that name)"}`);
  if (loaded.checkSettings !== undefined && typeof loaded.checkSettings !== "function") throw new ConfigurationError(`PROCESSORS_MODULE: ${specifier} exports a checkSettings that is not a function`);
  return { create, checkSettings: loaded.checkSettings as CheckSettings | undefined };
}

/** A throw of the module's function: a setting it refuses names its own variable already (the example adapter's PROCESSOR_A_URL...). */
const moduleFailed = (specifier: string, call: string, error: unknown) =>
  error instanceof ConfigurationError ? error : new ConfigurationError(`PROCESSORS_MODULE: ${call} of ${specifier} failed (${error instanceof Error ? error.message : String(error)})`, { cause: error });

/** Loads the adapters module and checks it serves every routed processor with every call. */
export async function loadAdapters(specifier: string, context: AdapterContext): Promise<Processors & { close(): Promise<void> }> {
  const { create } = await importProcessorsModule(specifier);
  let adapters: ProcessorAdapters;
  try {
    adapters = await create(context);
  } catch (error) {
    throw moduleFailed(specifier, "createProcessors", error);
  }
  const processors = processorsFromAdapters(adapters, (problem) => new ConfigurationError(`PROCESSORS_MODULE: ${specifier}: ${problem}`));
  return { ...processors, close: async () => void (await adapters.close?.()) };
}

/**
 * The processor settings, checked before a start opens any store: the sandbox takes no
 * PROCESSORS_MODULE, production needs one, its module loads and exports createProcessors (run
 * once the stores are open: its context needs them), and its checkSettings, if any, passes.
 */
export async function checkProcessorSettings(config: Pick<ServiceConfig, "sandbox" | "processorsModule" | "outbound">, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  if (config.sandbox) {
    if (config.processorsModule) throw new ConfigurationError("PROCESSORS_MODULE: the sandbox runs the simulated processors; real adapters run in production (SANDBOX=off or NODE_ENV=production)");
    return;
  }
  if (!config.processorsModule) {
    throw new ConfigurationError(
      `production mode (${env.SANDBOX ? "SANDBOX=off" : "NODE_ENV=production"}) runs no simulated processor: set PROCESSORS_MODULE to a module exporting createProcessors() with an adapter for processor ${ROUTED_PROCESSORS.join(" and ")} (README: Running in production), or run the sandbox with SANDBOX=on`,
    );
  }
  const { checkSettings } = await importProcessorsModule(config.processorsModule);
  try {
    await checkSettings?.({ env, outbound: outboundOf(config) });
  } catch (error) {
    throw moduleFailed(config.processorsModule, "checkSettings", error);
  }
}

/**
 * The processors of `npm start` and the CLI. Sandbox: the simulators, their side shared through
 * DATA_DIR. Production: PROCESSORS_MODULE's adapters, or a ConfigurationError naming what is missing.
 * `store`: where production processes are counted, and a sandbox refuses a store they served
 * (./production-mark.ts); `onProduction`: a sandbox process's end once production counts itself
 * there while it runs (the store is watched until close()). Production waits, counted, while a
 * sandbox could still be running there, before it answers. The caller has checked the settings
 * first (checkProcessorSettings: a server before its store, ../serve/before-stores.ts).
 */
export async function serviceProcessors(
  config: ServiceConfig,
  {
    clock,
    ids,
    store,
    logger,
    env = process.env,
    ledgerMustExist,
    state = memoryAdapterState(),
    onProduction,
    counted = true,
  }: {
    clock: Clock;
    ids: Ids;
    store: IdSequences;
    logger: Logger;
    env?: NodeJS.ProcessEnv;
    /** The sandbox ledger must exist: the setting that named its directory, for the refusal (reconcile). */
    ledgerMustExist?: "--data-dir" | "DATA_DIR" | "--store" | "the default data directory";
    state?: AdapterState;
    onProduction?: (refusal: ProductionStore) => void;
    /** false: a process that appends nothing (reconcile --dry-run) is not counted on the store (./production-mark.ts). */
    counted?: boolean;
  },
): Promise<ServiceProcessors> {
  if (config.sandbox) {
    await markOrRefuseProductionStore(store, true, { count: counted });
    const ledger = processorSideIn(config.dataDir);
    if (ledgerMustExist !== undefined && !existsSync(ledger)) {
      throw new InvalidRequest(`${ledgerMustExist}: no sandbox processor ledger at ${ledger}; nothing was created: reconcile reads the service's (simulators.sqlite in its DATA_DIR), give that directory with --data-dir or DATA_DIR`, "data-dir");
    }
    const side = fileSide(ledger);
    const { captures, captureSettleMs, processorLatencyMs } = config;
    const simulators = createSimulators({ clock, ids, captures, captureSettleMs, processorLatencyMs, side });
    const watch = onProduction && watchProductionMark(store, onProduction);
    return { processors: simulators, simulators, mode: "sandbox", ...(watch ? { watch } : {}), close: async () => (watch?.close(), side.close()) };
  }
  const adapters = await loadAdapters(config.processorsModule!, { outbound: outboundOf(config), clock, ids, env, logger, state });
  const { waitMs } = await markOrRefuseProductionStore(store, false, { count: counted });
  if (waitMs > 0) {
    logger.info({ wait_ms: waitMs }, `a sandbox process ran on this store: waiting ${waitMs} ms, counted as production, before any processor call, so a sandbox still running here sees it and stops`);
    await new Promise((resolve) => setTimeout(resolve, waitMs));
    await markSandboxesStopped(store);
  }
  return { processors: adapters, mode: `production (adapters: ${config.processorsModule})`, close: adapters.close };
}
