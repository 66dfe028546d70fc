/**
 * The arithmetic of a buyer's total, with no schema in it (no zod), so that a page's script can
 * show a worked example by the same rule the service prices orders with (`shared/domain/pricing.ts`
 * re-exports it).
 */

/** n / d rounded half up, for non-negative integers. */
export const divideHalfUp = (numerator: bigint, denominator: bigint): bigint => (2n * numerator + denominator) / (2n * denominator);

/**
 * The buyer's total for B = subtotal + tax: the merchant nets exactly B × (1 + p/100) after the split
 * pays the platform and partner their F basis points, so total = B × (10000 + 100p) / (10000 − F).
 */
export const totalWithFeesCents = (baseCents: number, processingFeeHundredths: number, feeBps: number): number =>
  Number(divideHalfUp(BigInt(baseCents) * BigInt(10_000 + processingFeeHundredths), BigInt(10_000 - feeBps)));
