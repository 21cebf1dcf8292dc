// KurrentDB cannot run on the development or CI machines, so the contract runs only against a
// server named by KURRENTDB_URL; without it the contract is reported as skipped, its reason in the
// suite's name, never as passed. What can be checked offline is checked either way: the adapter
// loads and refuses to start without a URL.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createKurrentStore } from "../../src/store/kurrentdb/index.js";
import { eventStoreContract } from "./contract.js";

const url = process.env.KURRENTDB_URL;

describe.skipIf(!url)(`KurrentDB contract${url ? "" : " (skipped: KURRENTDB_URL is unset, no KurrentDB server on this machine)"}`, () => {
  eventStoreContract(
    "kurrentdb",
    async () => {
      const namespace = `cardflow-test-${randomUUID().slice(0, 8)}/`;
      return { open: () => createKurrentStore({ url, namespace }) };
    },
    { durable: true },
  );
});

describe("KurrentDB adapter offline", () => {
  it("loads and refuses a missing URL, naming KURRENTDB_URL", async () => {
    await expect(createKurrentStore({ url: undefined })).rejects.toThrow(/KURRENTDB_URL/);
    await expect(createKurrentStore({ url: "" })).rejects.toThrow(/connection string/);
  });
});
