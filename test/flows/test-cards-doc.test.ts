// docs/test-cards.md documents every test card, test amount and sandbox token the simulator knows.
import { readFileSync } from "node:fs";
import { expect, test } from "vitest";
import { FAILURES } from "../../machines/failures.js";
import { TEST_AMOUNTS, TEST_CARDS, TEST_PAYMENT_METHODS, testAmountIn } from "../../src/processors/test-cards.js";

const doc = readFileSync(new URL("../../docs/test-cards.md", import.meta.url), "utf8");
const rows = doc.split("\n").filter((l) => l.startsWith("| "));

test("every test card is a row with its expiry, error code, description and AVS code", () => {
  for (const c of TEST_CARDS) {
    const row = rows.find((r) => r.startsWith(`| \`${c.number}\``));
    expect(row, c.number).toBeDefined();
    expect(row).toContain(`${c.card.exp_month}/${c.card.exp_year}`);
    if (!c.outcome.approve) {
      expect(row).toContain(c.outcome.last_error);
      expect(row).toContain(c.outcome.last_error_code ?? "(none)");
      expect(row).toContain(c.outcome.last_error_code ? FAILURES[c.outcome.last_error_code].leadsTo : "error");
    }
    // a payment not approved has no AVS result (its fields are absent)
    expect(row).toMatch(c.outcome.approve ? new RegExp(`\\| ${c.avs.code} \\|$`) : /\| \(none\) \|$/);
  }
});

test("every test amount is a row with its USD, JPY and KWD amounts and its outcome", () => {
  for (const [minor, outcome] of TEST_AMOUNTS) {
    const row = rows.find((r) => r.startsWith(`| ${minor} |`));
    expect(row, String(minor)).toBeDefined();
    expect(row).toContain(`| ${testAmountIn(minor, "USD")} | ${testAmountIn(minor, "JPY")} | ${testAmountIn(minor, "KWD")} |`);
    if (!outcome.approve) expect(row).toContain(`${outcome.last_error} | ${outcome.last_error_code ?? "(none)"} |`);
  }
});

test("every sandbox token is listed", () => {
  for (const [token, number] of Object.entries(TEST_PAYMENT_METHODS)) expect(rows.some((r) => r.includes(`\`${token}\``) && r.includes(number))).toBe(true);
});
