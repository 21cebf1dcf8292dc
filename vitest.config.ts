import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // One embedded PostgreSQL for the whole run (or DATABASE_URL); see test/support/postgres.ts.
    globalSetup: ["test/support/postgres.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // the JSON report lets .ci/run print a plain "N passed, N failed" line
    reporters: ["default", "json"],
    outputFile: { json: ".tmp/vitest-report.json" },
  },
});
