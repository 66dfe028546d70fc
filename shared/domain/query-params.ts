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

/** The id rule lives in `ids.ts`; query schemas name it from here too. */
export { ID_PATTERN, Id } from './ids';
