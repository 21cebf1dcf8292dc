// A late answer a payment no longer took (LateAnswerUnapplied, beside the payment) is an audit
// finding until an operator settles it with the processor and says so: `cardflow
// settle-late-answer` (the real binary) records LateAnswerSettled once, and the audit is clean.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { nodeProcess } from "../audit/run-cli.js";
import { systemClock } from "../../src/clock.js";
import { createEngine } from "../../src/engine.js";
import { createLateAnswers } from "../../src/engine/streams/late-answers.js";
import { randomIds } from "../../src/ids.js";
import { createSqliteStore } from "../../src/store/sqlite/index.js";

const BIN = new URL("../../bin/cardflow.js", import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), "cardflow-cli-late-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `cardflow ...args` as a process: its exit code and output. */
const cardflow = (...args: string[]) => nodeProcess([BIN, ...args], { ...process.env, DATABASE_URL: "" });

describe("cardflow settle-late-answer", () => {
  it("settles a late answer the payment no longer took, once; the audit reports it until then", { timeout: 60_000 }, async () => {
    const path = join(dir, "late.sqlite");
    const store = `sqlite:${path}`;
    const { events, readModels } = createSqliteStore({ path });
    const engine = createEngine({ store: events, readModels });
    await engine.openAccount({ external_account_id: "acct_cli" });
    const created = (await engine.createIntent({ external_account_id: "acct_cli", amount: "10.00", payment_method_types: "card", capture_method: "automatic", payment_method_id: "pm_card_visa", external_customer_id: "cus_cli" })) as { payment_id: string };
    const payment_id = created.payment_id;
    const answer = [{ type: "PaymentRefunded", data: { refund_id: "re_late", amount: "4.00", reason: null } }];
    await createLateAnswers({ store: events, clock: systemClock, ids: randomIds() }).recordUnapplied({ payment_id, attempt_id: "att_late", attempt_type: "RefundAttempted", answer, reason: "PaymentRefunded not allowed" }, { actor: "test" });
    await engine.close();

    const before = await cardflow("audit", payment_id, "--store", store);
    expect(before.code).toBe(1);
    expect(before.out).toContain("[late_answer_unapplied]");
    expect(before.out).toContain("attempt att_late after it was abandoned");
    expect((await cardflow("audit", "--all", "--store", store, "--no-progress")).code).toBe(1);

    // refused: no note, an attempt the payment has no late answer for
    expect((await cardflow("settle-late-answer", payment_id, "att_late", "--store", store)).code).toBe(2);
    const unknown = await cardflow("settle-late-answer", payment_id, "att_other", "--note", "refunded again", "--store", store);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain(`no unapplied late answer "att_other" in SQLite ${path}`);
    const noPayment = await cardflow("settle-late-answer", "pi_nonexist", "att_late", "--note", "x", "--store", store);
    expect(noPayment.code).toBe(2);
    expect(noPayment.err).toContain(`cardflow: no payment "pi_nonexist" in SQLite ${path}\n`);

    const settled = await cardflow("settle-late-answer", payment_id, "att_late", "--note", "refund re_late voided at the processor", "--store", store);
    expect(settled.code, settled.err).toBe(0);
    expect(settled.out).toContain(`settled: the late answer to att_late of payment ${payment_id}`);
    expect((await cardflow("settle-late-answer", payment_id, "att_late", "--note", "again", "--store", store)).code).toBe(0);

    const after = createSqliteStore({ path });
    const recorded = await after.events.readStream(`late_answers-${payment_id}`);
    await after.events.close();
    await after.readModels.close();
    expect(recorded.map((e) => [e.type, e.metadata.actor])).toEqual([
      ["LateAnswerUnapplied", "test"],
      ["LateAnswerSettled", "cli"],
    ]);
    // a request id from the store's counter, as the server's (not a random 16-digit one)
    expect(recorded[1]!.metadata.request_id).toBeLessThan(1_000_000);
    expect(recorded[1]!.data).toEqual({ payment_id, attempt_id: "att_late", note: "refund re_late voided at the processor" });
    expect((await cardflow("audit", payment_id, "--store", store)).code).toBe(0);
    expect((await cardflow("audit", "--all", "--store", store, "--no-progress")).code).toBe(0);
  });
});
