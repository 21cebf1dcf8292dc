// What the multi-process and crash tests share between the test process and the engine workers:
// how to open the durable store they point at, the account and payments they set up, and the
// ack lines a worker prints once a command has resolved (an acknowledged command).
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { AuthorizationOutcome } from "../../../src/processors/port.js";
import type { EventStore, ReadModelStore } from "../../../src/store/port.js";
import { createPostgresStore } from "../../../src/store/postgres/index.js";
import { createSqliteStore } from "../../../src/store/sqlite/index.js";
import { TEST_CARD } from "../../support/scripted-processor.js";
import type { CreateIntentRequest } from "../../../src/inputs.js";

export type StoreSpec = { kind: "sqlite"; path: string } | { kind: "postgres"; url: string; schema: string };

export async function openDurable(spec: StoreSpec): Promise<{ events: EventStore; readModels: ReadModelStore }> {
  return spec.kind === "sqlite"
    ? createSqliteStore({ path: spec.path, pollMs: 20 })
    : createPostgresStore({ connectionString: spec.url, schema: spec.schema, pollMs: 20 });
}

export const ACCOUNT = "acct_multi";

export const AUTHORIZED: AuthorizationOutcome = {
  kind: "authorized",
  authorization: {
    amount_authorized: "100.00",
    tip_amount: "0.00",
    donation_amount: "0.00",
    authorization_code: "OK1234",
    card: { ...TEST_CARD, type: "card_not_present" },
    avs_response_code: null,
    avs_response_message: null,
  },
};

export const STORED_CARD_INTENT: CreateIntentRequest = {
  external_account_id: ACCOUNT,
  amount: "100.00",
  payment_method_types: "card",
  capture_method: "manual",
  payment_method_id: "pm_card_visa",
  external_customer_id: "cus_1",
};

export type Ack =
  | { op: "created" | "authorized" | "captured" | "refunded"; payment_id: string }
  | { op: "done"; refused: number };

export interface WorkerSpec {
  store: StoreSpec;
  mode: "race" | "load";
  paymentIds?: string[];
  /** load: parallel command loops. */
  concurrency?: number;
  /** Keep the read models live in this process (engine option liveProjections). */
  liveProjections: boolean;
}

/** Starts an engine worker (a separate Node process) and hands every ack line to onAck. */
export function startWorker(spec: WorkerSpec, onAck: (ack: Ack) => void): { child: ChildProcess; exited: Promise<number | null> } {
  const worker = fileURLToPath(new URL("./engine-worker.ts", import.meta.url));
  const child = spawn(process.execPath, ["--import", "tsx", worker, JSON.stringify(spec)], { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  createInterface({ input: child.stdout! }).on("line", (line) => onAck(JSON.parse(line) as Ack));
  const exited = new Promise<number | null>((resolve) =>
    child.on("exit", (code, signal) => {
      if (code !== 0 && signal !== "SIGKILL") console.error(`engine worker failed (${code ?? signal}):\n${stderr}`);
      resolve(code);
    }),
  );
  return { child, exited };
}
