// What the simulated processors keep on their side: in a file, every handle on it (every process
// of a host) sees one processor: calls recorded by one are found by another, and a change (ending
// a terminal's collection) happens once across them.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createLedger } from "../../src/processors/ledger.js";
import { fileSide, memorySide, processorSideIn } from "../../src/processors/processor-side.js";
import { holdWriteLock } from "../support/write-lock.js";

const dir = mkdtempSync(join(tmpdir(), "cardflow-side-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the simulators' side in a file", () => {
  it("a call recorded through one handle is found through another, with every entry", () => {
    const file = processorSideIn(dir);
    const one = fileSide(file);
    const other = fileSide(file);
    try {
      const ledger = createLedger(one);
      for (let i = 0; i < 50; i++) ledger.set(`att_${i}`, { call: "capture", outcome: { kind: "captured" } });
      expect(createLedger(other).get("att_0")).toEqual({ call: "capture", outcome: { kind: "captured" } });
      expect(createLedger(other).get("att_never")).toBeUndefined();
      expect(createLedger(other).entries()).toHaveLength(50);
    } finally {
      one.close();
      other.close();
    }
  });

  it("opens a new file while another process holds its write lock (the processes of a host start together): it waits, then opens", async () => {
    const file = join(dir, "held", "side.sqlite");
    mkdirSync(dirname(file), { recursive: true });
    const { released } = await holdWriteLock(file, 300);
    const started = Date.now();
    const side = fileSide(file);
    try {
      expect(Date.now() - started).toBeGreaterThanOrEqual(100); // it waited for the lock (a refusal took 0 ms)
      createLedger(side).set("att_1", { call: "capture", outcome: { kind: "captured" } });
      expect(createLedger(side).get("att_1")).toEqual({ call: "capture", outcome: { kind: "captured" } });
    } finally {
      side.close();
      await released;
    }
  });

  it("creates the directory of its file", () => {
    const file = join(dir, "new", "deeper", "simulators.sqlite");
    const side = fileSide(file);
    createLedger(side).set("att_1", { call: "void" });
    side.close();
    const again = fileSide(file);
    expect(createLedger(again).entries()).toEqual([["att_1", { call: "void" }]]);
    again.close();
  });

  it("a change ends a value once across handles; a throw inside it changes nothing", () => {
    const one = fileSide(join(dir, "change.sqlite"));
    const other = fileSide(join(dir, "change.sqlite"));
    try {
      one.set("sessions", "tmr_1", { key: "att_1" });
      const endIfAtt1 = (current: { key: string } | undefined) => (current?.key === "att_1" ? undefined : current);
      expect(other.change("sessions", "tmr_1", endIfAtt1)).toEqual({ key: "att_1" });
      // the second ender sees it already gone
      expect(one.change("sessions", "tmr_1", endIfAtt1)).toBeUndefined();
      one.set("sessions", "tmr_2", { key: "att_2" });
      expect(() =>
        other.change("sessions", "tmr_2", () => {
          throw new Error("busy");
        }),
      ).toThrow("busy");
      expect(one.get("sessions", "tmr_2")).toEqual({ key: "att_2" });
    } finally {
      one.close();
      other.close();
    }
  });
});

describe("either side", () => {
  it.each([
    ["in memory", () => memorySide()],
    ["in a file", () => fileSide(join(dir, "deletes.sqlite"))],
  ])("%s: a value set or changed to undefined is deleted, so entries() no longer lists it", (_, open) => {
    const side = open();
    try {
      side.set("settlements", "pi_1", { amount: "1.00", due: 1 });
      side.set("settlements", "pi_2", { amount: "2.00", due: 2 });
      side.set("settlements", "pi_3", { amount: "3.00", due: 3 });
      expect(side.change("settlements", "pi_1", () => undefined)).toEqual({ amount: "1.00", due: 1 });
      side.set("settlements", "pi_2", undefined);
      expect(side.entries("settlements")).toEqual([["pi_3", { amount: "3.00", due: 3 }]]);
      expect(side.get("settlements", "pi_1")).toBeUndefined();
    } finally {
      side.close();
    }
  });

  it("in a file: a closed side is not used by mistake (it throws, it does not read an old handle)", () => {
    const side = fileSide(join(dir, "closed.sqlite"));
    side.set("vault", "pm_1", { number: "4242424242424242" });
    side.close();
    expect(() => side.get("vault", "pm_1")).toThrow();
  });
});

describe("the simulators' side in memory", () => {
  it("keeps every card on file, and the calls and cards read of the last 10,000 only (a long-running process stays flat)", () => {
    const side = memorySide();
    for (let i = 0; i < 10_001; i++) {
      side.set("cards", `pi_${i}`, "4242424242424242");
      side.set("ledger", `att_${i}`, { call: "void" });
      side.set("vault", `pm_${i}`, { number: "4242424242424242" });
    }
    expect(side.get("cards", "pi_0")).toBeUndefined();
    expect(side.get("cards", "pi_1")).toBe("4242424242424242");
    expect(side.get("ledger", "att_0")).toBeUndefined();
    expect(side.get("ledger", "att_10000")).toEqual({ call: "void" });
    expect(side.entries("ledger")).toHaveLength(10_000);
    expect(side.entries("vault")).toHaveLength(10_001);
  });
});
