import { z } from 'zod';

/** Largest USD amount accepted anywhere: keeps every cent value far inside the safe-integer range. */
export const MAX_USD = 1_000_000_000;

/** True when the number has at most two decimals (1.1 yes, 1.005 no, 0.1 + 0.2 no). */
export const hasCentPrecision = (usd: number): boolean => Math.round(usd * 100) / 100 === usd;

/** A USD amount on the wire: a finite, non-negative JSON number with at most 2 decimals. */
export const usdAmount = z
  .number()
  .finite()
  .min(0, 'must not be negative')
  .max(MAX_USD, `must be at most ${MAX_USD}`)
  .refine(hasCentPrecision, 'must have at most 2 decimals');

export const toCents = (usd: number): number => Math.round(usd * 100);
export const fromCents = (cents: number): number => cents / 100;
