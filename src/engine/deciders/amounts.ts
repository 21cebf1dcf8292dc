// An amount from a command's input, for the payment's currency: written with its minor units, or
// the input's refusal (400 naming the field).
import { InvalidRequest } from "../../errors.js";
import { formatAmount, InvalidAmount, parseAmount } from "../../money.js";

export function amountIn(input: unknown, currency: string, param = "amount"): string | { refuse: InvalidRequest } {
  try {
    return formatAmount(parseAmount(input, currency), currency);
  } catch (error) {
    if (error instanceof InvalidAmount) return { refuse: new InvalidRequest(`${param}: ${error.reason}`, param, "amount_invalid") };
    throw error;
  }
}
