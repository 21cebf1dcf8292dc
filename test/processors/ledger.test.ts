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
});
