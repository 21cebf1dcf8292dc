// The published package, as a user gets it: `npm pack` (which builds dist/ first), then
// `npm install ./cardflow-*.tgz` in an empty directory, then plain node (no tsx, no TypeScript
// at run time) imports the library, the client and the machines, and runs `npx cardflow --help`
// and `npx cardflow serve`.
import { execFile, spawn } from "node:child_process";
import { createServer as createNetServer } from "node:net";
import { copyFile, mkdtemp, readdir, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { startApi } from "../http/harness.js";

const run = promisify(execFile);
const root = new URL("../..", import.meta.url).pathname;

const consumer = `
import { createEngine, createSqliteStore, createServer, createPostgresStore, createKurrentStore, createSimulators, createMemoryReadModels } from "cardflow";
import { createClient, ApiError } from "cardflow/client";
import { paymentMachine, PAYMENT_STATUSES } from "cardflow/machines";

const { events, readModels } = createSqliteStore({ path: process.argv[2] });
const engine = createEngine({ store: events, readModels });
await engine.openAccount({ external_account_id: "acct_pkg", processor: "A", currency: "USD" });
const intent = await engine.createIntent({ external_account_id: "acct_pkg", amount: "9.99", payment_method_types: "card", capture_method: "automatic", payment_method_id: "pm_card_visa", external_customer_id: "cus_1" });
const paid = await engine.authorize({ external_account_id: "acct_pkg", payment_id: intent.payment_id });
// the compiled server serves the console's prebuilt bundle (no esbuild, no sources in the package)
const memory = createEngine();
const app = createServer({ engine: memory });
await app.listen({ port: 0, host: "127.0.0.1" });
const script = await fetch(\`http://127.0.0.1:\${app.server.address().port}/console/console.js\`, { headers: { "accept-encoding": "identity" } });
const consoleJs = script.status === 200 && (await script.text()).length > 1000;
await app.close();
await memory.close();
await engine.close();
const kinds = [createServer, createPostgresStore, createKurrentStore, createSimulators, createMemoryReadModels, createClient, ApiError].map((f) => typeof f);
// pg and the KurrentDB client are optional peers, not installed here: opening such a store says what to install
const missing = await Promise.all([
  createPostgresStore({ connectionString: "postgres://127.0.0.1:9/none" }).catch((e) => e.message),
  createKurrentStore({ url: "kurrentdb://127.0.0.1:9?tls=false" }).catch((e) => e.message),
]);
console.log(JSON.stringify({ status: paid.status, captured: paid.amount_captured, kinds, machine: paymentMachine.id, statuses: PAYMENT_STATUSES.length, consoleJs, missing }));
`;

describe("the npm package", () => {
  it("installs from its tarball and works with plain node: library, client, machines, the cardflow bin, the types", async () => {
    const dir = await mkdtemp(join(tmpdir(), "cardflow-package-"));
    const { stdout: packed } = await run("npm", ["pack", "--silent", "--pack-destination", dir], { cwd: root, maxBuffer: 1 << 24 });
    const tarball = join(dir, packed.trim().split("\n").pop()!);
    expect(tarball).toMatch(/cardflow-.*\.tgz$/);

    const app = join(dir, "app");
    await run("mkdir", [app]);
    // --ignore-scripts and the copied addon: better-sqlite3 would otherwise compile its native
    // addon for minutes; the override pins the version whose addon this repository built.
    const sqliteVersion = JSON.parse(await readFile(join(root, "node_modules/better-sqlite3/package.json"), "utf8")).version;
    await writeFile(join(app, "package.json"), JSON.stringify({ name: "app", private: true, type: "module", overrides: { "better-sqlite3": sqliteVersion } }));
    // --prefer-offline: from npm's cache where it can (filled by the repository's own install)
    await run("npm", ["install", tarball, "--prefer-offline", "--ignore-scripts", "--no-audit", "--no-fund"], { cwd: app, maxBuffer: 1 << 24 });
    const addon = "node_modules/better-sqlite3/build/Release";
    await run("mkdir", ["-p", join(app, addon)]);
    await copyFile(join(root, addon, "better_sqlite3.node"), join(app, addon, "better_sqlite3.node"));

    const installed = await readdir(join(app, "node_modules"));
    expect(installed).toContain("cardflow");
    expect(installed).not.toContain("tsx"); // a devDependency only
    expect(installed).not.toContain("typescript");
    expect(await readdir(join(app, "node_modules/cardflow"))).not.toContain("src"); // compiled code only

    await writeFile(join(app, "use.mjs"), consumer);
    const { stdout } = await run(process.execPath, ["use.mjs", join(dir, "pkg.sqlite")], { cwd: app });
    expect(JSON.parse(stdout)).toEqual({
      status: "succeeded",
      captured: "9.99",
      kinds: Array(7).fill("function"),
      machine: "payment",
      statuses: expect.any(Number),
      consoleJs: true,
      missing: [
        "A PostgreSQL store needs the package pg, which is not installed: npm install pg",
        "A KurrentDB store needs the package @kurrent/kurrentdb-client, which is not installed: npm install @kurrent/kurrentdb-client",
      ],
    });
    expect(installed).not.toContain("pg"); // optional peers: not installed for a SQLite consumer
    expect(installed).not.toContain("@kurrent");

    // the tarball: LICENSE, and a README whose links are all absolute (to files the package ships)
    const pkgDir = join(app, "node_modules/cardflow");
    expect(await readFile(join(pkgDir, "LICENSE"), "utf8")).toMatch(/^MIT License/);
    const readme = await readFile(join(pkgDir, "README.md"), "utf8");
    const targets = [...readme.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!);
    expect(targets.filter((t) => !/^(https?:|#)/.test(t))).toEqual([]);
    const version = JSON.parse(await readFile(join(pkgDir, "package.json"), "utf8")).version;
    for (const t of targets.filter((t) => t.startsWith(`https://unpkg.com/cardflow@${version}/`))) {
      expect(existsSync(join(pkgDir, t.slice(`https://unpkg.com/cardflow@${version}/`.length).split("#")[0]!)), t).toBe(true);
    }
    expect(await readFile(join(root, "README.md"), "utf8")).toContain("](docs/test-cards.md)"); // the repository's README put back

    // README's client example, from the installed package, as JavaScript (the block as written: it is
    // TypeScript and JavaScript both), twice against a server
    const block = /<!-- readme-example: client[^>]*-->\s*```ts\n([\s\S]*?)```/.exec(readme)![1]!;
    const expected = [...block.matchAll(/console\.log\([^;]*\);\s*\/\/ (.+)$/gm)].map((m) => m[1]);
    await writeFile(join(app, "example.mjs"), block);
    const api = await startApi();
    try {
      const { key } = await api.merchant("acct_demo");
      for (const _time of [1, 2]) {
        const example = await run(process.execPath, ["example.mjs"], { cwd: app, env: { ...process.env, BASE: api.base, KEY: key } });
        expect(example.stdout.trim().split("\n")).toEqual(expected);
      }
    } finally {
      await api.close();
    }

    const help = await run("npx", ["--no-install", "cardflow", "--help"], { cwd: app });
    expect(help.stdout).toMatch(/^Usage: cardflow/m);
    expect(help.stdout).toMatch(/^  audit /m);

    // `npx cardflow serve`: the server of npm start, compiled; ready, then stopped by SIGTERM with exit 0
    const port = await new Promise<number>((resolve) => {
      const probe = createNetServer().listen(0, "127.0.0.1", () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    const served = spawn(process.execPath, [join(app, "node_modules/.bin/cardflow"), "serve", "--port", String(port), "--host", "127.0.0.1", "--data-dir", join(dir, "served")], {
      cwd: app,
      env: { ...process.env, METRICS_PORT: "0", SHUTDOWN_GRACE_MS: "0", LOG_LEVEL: "warn" },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let said = "";
    served.stderr!.on("data", (d: Buffer) => (said += d.toString()));
    const exited = new Promise<number | null>((resolve) => served.on("exit", resolve));
    let ready = 0;
    for (let i = 0; i < 300 && served.exitCode === null && ready !== 200; i++) {
      ready = await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.status, () => 0);
      if (ready !== 200) await new Promise((r) => setTimeout(r, 100));
    }
    expect(ready, said).toBe(200);
    expect(said).toContain(`cardflow is listening on http://localhost:${port}`);
    served.kill("SIGTERM");
    expect(await exited).toBe(0);

    // the .d.ts files type a consumer's TypeScript (checked with the repository's compiler)
    await writeFile(
      join(app, "use.ts"),
      `import { createEngine, type PaymentRecord } from "cardflow";\nimport { createClient } from "cardflow/client";\nimport { paymentMachine } from "cardflow/machines";\n` +
        `const engine = createEngine();\nconst record: Promise<PaymentRecord> = engine.getPayment({ external_account_id: "a", payment_id: "p" });\n` +
        `const client = createClient({ baseUrl: "http://localhost:8080", apiKey: "k" });\nconst read: Promise<{ status: string }> = client.getPayment({ external_account_id: "a", payment_id: "p" });\n` +
        `// @ts-expect-error: amount is required by the capture schema\nvoid client.capture({ external_account_id: "a", payment_id: "p" });\n` +
        `// @ts-expect-error: the engine's inputs are typed too (a misspelt field)\nvoid engine.createIntent({ external_account_id: "a", ammount: "1.00", payment_method_types: "card", capture_method: "manual" });\n` +
        `export { record, read, paymentMachine };\n`,
    );
    // every module resolution that reads package.json's exports: node16, nodenext, bundler
    const tsc = join(root, "node_modules/typescript/bin/tsc");
    for (const [module, resolution] of [["node16", "node16"], ["nodenext", "nodenext"], ["esnext", "bundler"], ["preserve", "bundler"]]) {
      await run(process.execPath, [tsc, "--noEmit", "--strict", "--module", module!, "--moduleResolution", resolution!, "--target", "es2022", "--types", "node", "use.ts"], { cwd: app }).catch((e) => {
        throw new Error(`consumer typecheck failed with module ${module}, moduleResolution ${resolution}:\n${e.stdout}${e.stderr}`);
      });
    }
  }, 300_000);
});
