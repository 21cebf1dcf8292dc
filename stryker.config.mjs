// Mutation testing (StrykerJS): `npm run mutation`; docs/MUTATION.md has the scores and the
// surviving mutants. Too slow for every CI run: run it by hand or from a scheduled job.
// One file group at a time keeps a run short: `npm run mutation -- --mutate src/money.ts`.
/** @type {import("@stryker-mutator/api/core").PartialStrykerOptions} */
export default {
  mutate: ["machines/**/*.ts", "src/money.ts", "src/idempotency.ts", "src/processors/**/*.ts", "projections/**/*.ts"],
  testRunner: "vitest",
  // the tests that import a mutated file (vitest --related), and per mutant only those covering it
  vitest: { configFile: "vitest.mutation.config.ts", related: true },
  coverageAnalysis: "perTest",
  // the machine is shared by ~6 people: two test processes at most
  concurrency: 2,
  // A mutant hit only while modules load (module-level tables, regexes, Decimal's configuration)
  // would need a fresh load and the whole related suite (~270 tests) per mutant: hours on this
  // machine. Those are ignored (counted in docs/MUTATION.md); a mutant also hit by tests still runs.
  ignoreStatic: true,
  timeoutMS: 10_000,
  reporters: ["clear-text", "progress", "html", "json"],
  htmlReporter: { fileName: "reports/mutation/mutation.html" },
  jsonReporter: { fileName: "reports/mutation/mutation.json" },
  // re-runs test only the mutants whose code or covering tests changed
  incremental: true,
  incrementalFile: "reports/mutation/stryker-incremental.json",
  tempDirName: ".stryker-tmp",
  cleanTempDir: "always",
  thresholds: { high: 90, low: 80, break: null },
};
