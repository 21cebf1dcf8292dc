// `cardflow events tail`: the feed as lines (or the webhook bodies as JSON), one account or all,
// and following the store as another process appends.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createEngine } from "../../src/engine.js";
import { createSqliteStore } from "../../src/store/sqlite/index.js";
import { createWebhooks } from "../../src/index.js";
import { cardflow } from "../audit/run-cli.js";
import { until } from "./receiver.js";

const dir = mkdtempSync(join(tmpdir(), "cardflow-tail-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const path = join(dir, "store.sqlite");

function openEngine() {
  const { events, readModels } = createSqliteStore({ path });
  return createEngine({ store: events, readModels });
}
const charge = (engine: ReturnType<typeof openEngine>, account: string) =>
  engine
    .createIntent({ external_account_id: account, amount: "7.00", payment_method_types: "card", capture_method: "automatic", payment_method_id: "pm_card_visa", external_customer_id: "cus_1" })
    .then(({ payment_id }) => engine.authorize({ external_account_id: account, payment_id }));

const engine = openEngine();
for (const account of ["acct_x", "acct_y"]) await engine.openAccount({ external_account_id: account });
for (let i = 0; i < 3; i++) for (const account of ["acct_x", "acct_y"]) await charge(engine, account);
const feed = createWebhooks({ engine }).feed;
const expected = { acct_x: (await feed.page("acct_x", {})).data, acct_y: (await feed.page("acct_y", {})).data };
await engine.close();

describe("cardflow events tail", () => {
  it("on an export (jsonl:, saved with a byte order mark): prints its events and ends, saying an export is not followed", async () => {
    const exported = await cardflow("events", "export", "--store", `sqlite:${path}`);
    const file = join(dir, "export.jsonl");
    writeFileSync(file, `\uFEFF${exported.out}`);
    const printed = await cardflow("events", "tail", "--store", `jsonl:${file}`);
    expect(printed.code).toBe(0);
    expect(printed.out.trim().split("\n")).toHaveLength(12);
    expect(printed.err).toContain("cardflow: an export gets no new events: not followed\n");
    expect(printed.err).toMatch(/cardflow: printed up to position \d+; go on from there with --after/);
    // memory takes no location: memory:foo is not taken for memory
    const located = await cardflow("events", "tail", "--store", "memory:foo", "--no-follow");
    expect(located).toMatchObject({ code: 2, out: "" });
    expect(located.err).toContain('--store: memory takes no location (an empty store of this process), got "memory:foo"');
  });

  it("--no-follow --json prints the account's public events as the webhook bodies; without --account, every account's in log order", async () => {
    const one = await cardflow("events", "tail", "--store", `sqlite:${path}`, "--account", "acct_x", "--no-follow", "--json");
    expect(one.code).toBe(0);
    expect(one.out.trim().split("\n").map((l) => JSON.parse(l))).toEqual(expected.acct_x);
    const all = await cardflow("events", "tail", "--store", `sqlite:${path}`, "--no-follow");
    const lines = all.out.trim().split("\n");
    expect(lines).toHaveLength(12);
    expect(lines[0]).toMatch(/^\S+\s+acct_x\s+payment_intent\.created\s+pi_\S+\s+#1\s+evt_[0-9a-f]{32}\s+@\d+$/);
    expect(lines.filter((l) => l.includes("acct_y"))).toHaveLength(6);
    // a line's position is what --after takes: from the 4th line's, the 8 after it
    const fourth = lines[3]!.split("@").at(-1)!;
    const rest = await cardflow("events", "tail", "--store", `sqlite:${path}`, "--no-follow", "--after", fourth);
    expect(rest.out.trim().split("\n")).toEqual(lines.slice(4));
    expect(all.err).toContain(`cardflow: printed up to position ${lines[11]!.split("@").at(-1)}; go on from there with --after`);
    // from the last position printed: nothing more, and no error
    const last = lines[11]!.split("@").at(-1)!;
    expect(await cardflow("events", "tail", "--store", `sqlite:${path}`, "--no-follow", "--after", last)).toMatchObject({ code: 0, out: "" });
    // a position past the log's end (a typo, a store restored from before it) would skip what comes up to it
    const past = await cardflow("events", "tail", "--store", `sqlite:${path}`, "--account", "acct_x", "--no-follow", "--after", "1000000");
    expect(past).toMatchObject({ code: 2, out: "" });
    expect(past.err).toMatch(/\ncardflow: --after: position 1000000 is past the end of the event log \(its last position is \d+\); pass 0 for the beginning/);
    const after = await cardflow("events", "tail", "--store", `sqlite:${path}`, "--no-follow", "--after", "x");
    expect(after.code).toBe(2);
    expect(after.err).toMatch(/--after/);
    // an account the store does not hold: refused (it printed nothing, and followed for ever)
    const unknown = await cardflow("events", "tail", "--store", `sqlite:${path}`, "--account", "acct_nope");
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain('no merchant account "acct_nope"');
  });

  it("follows: an event appended by another process is printed as it happens", async () => {
    const child = spawn(process.execPath, ["bin/cardflow.js", "events", "tail", "--store", `sqlite:${path}`, "--account", "acct_y", "--json"], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    try {
      const lines = () => out.trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));
      await until(() => lines().length === 6, 20_000, "the existing events");
      const writer = openEngine();
      await charge(writer, "acct_x");
      await charge(writer, "acct_y");
      await writer.close();
      await until(() => lines().length === 8, 20_000, "the new events");
      expect(lines().slice(6).map((e) => [e.external_account_id, e.type])).toEqual([
        ["acct_y", "payment_intent.created"],
        ["acct_y", "payment_intent.succeeded"],
      ]);
    } finally {
      child.kill("SIGTERM");
    }
    expect(await exited).toBe(0);
  }, 60_000);
});
