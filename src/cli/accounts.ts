// `cardflow accounts create <external_account_id>`: opens a merchant account in the service's store
// (DATABASE_URL, else DATA_DIR) and issues its first API key; `cardflow accounts key <id>` issues another. Only the
// key goes to stdout, so scripts can capture it: KEY=$(npx cardflow accounts create acct_1).
import { Option, type Command } from "commander";
import { createApiKeys } from "../api-keys.js";
import { configFromEnv, openStores, type Stores } from "../config.js";
import { createEngine } from "../engine.js";
import { action, processIo, type CliIo } from "./io.js";

type Open = (dataDir: string) => Promise<Stores>;

const dataDirOption = () => new Option("--data-dir <dir>", "the service's data directory").env("DATA_DIR").default("./data");

export function registerAccounts(program: Command, io: CliIo = processIo, open: Open = (dataDir) => openStores(configFromEnv({ ...process.env, DATA_DIR: dataDir }))): void {
  /** Runs with an engine on the service's store, closing it whatever happens. */
  async function withEngine(dataDir: string, run: (engine: ReturnType<typeof createEngine>) => Promise<void>) {
    const { store, readModels } = await open(dataDir);
    const engine = createEngine({ store, readModels });
    try {
      await run(engine);
    } finally {
      await engine.close();
    }
  }

  const accounts = program.command("accounts").summary("merchant accounts and their API keys").description("merchant accounts of the HTTP API and their API keys");

  accounts
    .command("create")
    .summary("open a merchant account and print its new API key")
    .description("open a merchant account and issue its API key; prints only the key (shown once: only its SHA-256 is stored)")
    .argument("<external_account_id>", "the merchant account reference callers send as external_account_id")
    .addOption(new Option("--processor <processor>", "processor of its card-not-present payments").choices(["A", "B"]).default("A"))
    .option("--currency <code>", "ISO 4217 currency of its payments", "USD")
    .addOption(dataDirOption())
    .action(
      action(io, async (external_account_id: string, opts: { processor: "A" | "B"; currency: string; dataDir: string }) =>
        withEngine(opts.dataDir, async (engine) => {
          await engine.openAccount({ external_account_id, processor: opts.processor, currency: opts.currency }, { actor: "cli" });
          const { key } = await createApiKeys(engine).issue(external_account_id, "cli");
          io.out(`${key}\n`);
        }),
      ),
    );

  accounts
    .command("key")
    .summary("issue another API key for an account")
    .argument("<external_account_id>", "an existing merchant account")
    .addOption(dataDirOption())
    .action(
      action(io, async (external_account_id: string, opts: { dataDir: string }) =>
        withEngine(opts.dataDir, async (engine) => {
          const { key } = await createApiKeys(engine).issue(external_account_id, "cli");
          io.out(`${key}\n`);
        }),
      ),
    );
}
