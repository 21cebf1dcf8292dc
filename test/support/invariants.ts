// Amount invariants every payment record must hold (DESIGN.md: captured ≤ authorized, refunded ≤
// captured, refundable = captured − refunded).
import { expect } from "vitest";
import type { PaymentRecord } from "../../src/present/payment-record.js";
import { Decimal } from "../../src/money.js";

export function assertAmountInvariants(r: PaymentRecord) {
  const d = (v: string) => new Decimal(v);
  expect(d(r.amount_captured).lte(r.amount_authorized), "captured ≤ authorized").toBe(true);
  expect(d(r.amount_refunded).lte(r.amount_captured), "refunded ≤ captured").toBe(true);
  expect(d(r.amount_refundable).eq(d(r.amount_captured).minus(r.amount_refunded)), "refundable = captured − refunded").toBe(true);
  expect(d(r.amount_capturable).lte(r.amount_authorized), "capturable ≤ authorized").toBe(true);
}
