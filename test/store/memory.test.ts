import { createMemoryReadModels, createMemoryStore } from "../../src/store/memory/index.js";
import { readModelTablesContract } from "./read-model-tables.js";
import { eventStoreContract, readModelStoreContract } from "./contract.js";

// One handle per fixture: memory has no data outside its handle.
eventStoreContract("memory", async () => ({ open: async () => createMemoryStore() }), { durable: false });
readModelStoreContract("memory", async () => ({ open: async () => createMemoryReadModels() }), { durable: false });
readModelTablesContract("memory", async () => ({ open: async () => createMemoryReadModels() }), { durable: false });
