// The tests a mutation run (stryker.config.mjs) gives each mutant: the direct, fast suites of the
// mutated paths. Left out for time on a shared 2-core machine: the broad walks (machine paths
// ~50 s, compiled table, random model) and everything that starts servers, processes or databases
// (store, HTTP, audit): a mutant they alone would kill is listed as a survivor in docs/MUTATION.md.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: [
      "test/rules/**/*.test.ts",
      "test/machines/guards*.test.ts",
      // the compiler on small machines and the definition's helpers; the random compiled-vs-XState walk stays out (7 s per mutant)
      "test/machines/compiler.test.ts",
      "test/machines/definition.test.ts",
      "test/flows/**/*.test.ts",
      "test/money*.test.ts",
      "test/engine/inputs.test.ts",
      "test/engine/replay-and-projections.test.ts",
      "test/engine/runner.test.ts",
      "test/http/idempotency.test.ts",
      "test/idempotency/library.test.ts",
      // the processors' direct tests: the simulators' side and the settlement a simulator makes on its own
      "test/processors/**/*.test.ts",
      "test/projections/**/*.test.ts",
    ],
    testTimeout: 60_000,
  },
});
