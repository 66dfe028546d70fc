import { z } from 'zod';

/** Query strings arrive as text; an empty value counts as absent. */
export const blankAsAbsent = (value: unknown) => (value === '' ? undefined : value);

const integer = (min: number, max: number) =>
  z.coerce
    .number({ error: 'must be an integer' })
    .int('must be an integer')
    .min(min, `must be at least ${min}`)
    .max(max, `must be at most ${max}`);

/** An optional whole number from a query string. */
export const queryInteger = (min: number, max: number) => z.preprocess(blankAsAbsent, integer(min, max).optional());

/** A whole number from a query string, `fallback` when absent or empty. */
export const queryIntegerOr = (min: number, max: number, fallback: number) => z.preprocess(blankAsAbsent, integer(min, max).default(fallback));

/** The ids this service gives out or accepts (receipts, items, subscriptions): safe as store keys. */
export const ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
export const Id = z.string().regex(ID_PATTERN, 'must be 1–64 of A–Z a–z 0–9 _ -');
