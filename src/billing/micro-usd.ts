// Exact money arithmetic for limits: USD as integer micro-dollars. Prices per credit have at most
// four decimals and caps at most two (both numeric columns), so every amount here is a whole number
// of micro-dollars and comparing them never rounds (`usd()` rounds to cents, for display only).

const MICRO_PER_USD = 1_000_000;

/** A USD amount with at most six decimals (a numeric column's text or its number) as micro-dollars. */
export function toMicroUsd(amount: number | string): number {
  return Math.round(Number(amount) * MICRO_PER_USD);
}

/** What `credits` cost at `usdPerCredit`, in micro-dollars. */
export function creditsMicroUsd(credits: number, usdPerCredit: number | string): number {
  return credits * toMicroUsd(usdPerCredit);
}

/** Micro-dollars back to a USD number for a response (exact: at most six decimals). */
export function fromMicroUsd(micro: number): number {
  return micro / MICRO_PER_USD;
}
