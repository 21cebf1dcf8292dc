// The simulated processors' ledger: with a file, memory keeps the recent calls only, and a call
// older than those (what the reconciler asks about after a long outage) is still found, in the file.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createLedger } from "../../src/processors/ledger.js";

const dir = mkdtempSync(join(tmpdir(), "cardflow-ledger-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the simulators' ledger", () => {
  it("finds every call it recorded, the oldest from its file, also from another process's handle", () => {
    const file = join(dir, "ledger.jsonl");
    const ledger = createLedger(file);
    const calls = 10_050; // more than memory keeps
    for (let i = 0; i < calls; i++) ledger.set(`att_${i}`, { call: "capture", outcome: { kind: "captured" } });
    expect(ledger.get("att_0")).toEqual({ call: "capture", outcome: { kind: "captured" } });
    expect(ledger.get(`att_${calls - 1}`)).toBeDefined();
    expect(ledger.get("att_never")).toBeUndefined();
    const other = createLedger(file);
    expect(other.get("att_0")).toBeDefined();
    expect(other.entries()).toHaveLength(calls);
  });

  it("without a file keeps every call in memory, however many", () => {
    const ledger = createLedger();
    const calls = 10_050; // more than a ledger with a file keeps in memory
    for (let i = 0; i < calls; i++) ledger.set(`att_${i}`, { call: "refund", refund_id: "re_1" });
    expect(ledger.get("att_0")).toEqual({ call: "refund", refund_id: "re_1" });
    expect(ledger.get("att_never")).toBeUndefined();
    expect(ledger.entries()).toHaveLength(calls);
    expect(ledger.entries()[0]).toEqual(["att_0", { call: "refund", refund_id: "re_1" }]);
  });

  it("creates the directory of its file", () => {
    const file = join(dir, "new", "deeper", "ledger.jsonl");
    createLedger(file).set("att_1", { call: "void" });
    expect(createLedger(file).entries()).toEqual([["att_1", { call: "void" }]]);
  });
});
