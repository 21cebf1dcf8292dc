// What the checker reports: an anomaly names the check it failed (the letters of issue 29), its
// kind, the payment and operation it concerns, and what was seen.
export type Check = "a" | "b" | "c" | "d" | "e" | "f";

export interface Anomaly {
  check: Check;
  kind: string;
  payment_id: string | null;
  op: number | null;
  message: string;
}

export const anomaly = (check: Check, kind: string, payment_id: string | null, op: number | null, message: string): Anomaly => ({ check, kind, payment_id, op, message });
