// Read models whose commits wait while blocked: a projector that cannot commit (its database
// locked by someone else), for the reads that must not queue behind it.
import { createMemoryReadModels } from "../../src/store/memory/index.js";
import type { ReadModelStore } from "../../src/store/port.js";

export function lockableReadModels() {
  const inner = createMemoryReadModels();
  let blocked = false;
  let release: () => void = () => undefined;
  const readModels: ReadModelStore = {
    ...inner,
    async commitBatch(commits) {
      if (blocked) await new Promise<void>((resolve) => (release = resolve));
      return inner.commitBatch(commits);
    },
  };
  return { readModels, block: () => void (blocked = true), unblock: () => ((blocked = false), release()) };
}
