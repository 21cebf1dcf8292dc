// Prints vitest's JSON report as the plain closing line CI reads: "tests: N passed, N failed".
import { readFileSync } from "node:fs";

const report = JSON.parse(readFileSync(process.argv[2] ?? ".tmp/vitest-report.json", "utf8"));
const skipped = report.numPendingTests + report.numTodoTests;
console.log(`tests: ${report.numPassedTests} passed, ${report.numFailedTests} failed${skipped ? `, ${skipped} skipped` : ""}`);
process.exit(report.numFailedTests > 0 || report.numPassedTests === 0 ? 1 : 0);
