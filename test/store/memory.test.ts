import { createMemoryReadModels } from "../../src/store/memory-read-models.js";
import { createMemoryStore } from "../../src/store/memory.js";
import { eventStoreContract, readModelStoreContract } from "./contract.js";

// One handle per fixture: memory has no data outside its handle.
eventStoreContract("memory", async () => ({ open: async () => createMemoryStore() }), { durable: false });
readModelStoreContract("memory", async () => ({ open: async () => createMemoryReadModels() }), { durable: false });
