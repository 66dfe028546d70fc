import { describe, expect, it } from 'vitest';
import { hasCentPrecision, toCents } from '../../shared/domain/money';
import { toJson } from '../../shared/http/json';

describe('USD amounts', () => {
  it.each([
    [0, true],
    [1.1, true],
    [19.99, true],
    [1_000_000.01, true],
    [1.005, false],
    [0.1 + 0.2, false],
    [12.345, false],
  ])('%d has cent precision: %s', (usd, expected) => {
    expect(hasCentPrecision(usd)).toBe(expected);
  });

  it('converts to integer cents exactly', () => {
    expect([0.29, 1.1, 19.99, 24.5].map(toCents)).toEqual([29, 110, 1999, 2450]);
  });
});

describe('toJson', () => {
  it('writes exactly what JSON.stringify writes, frozen or not', () => {
    const frozen = Object.freeze({ a: 1, b: 'x"y', c: Object.freeze(['t']) });
    const values: unknown[] = [
      { items: [frozen, frozen], total: 2, skipped: undefined, nested: { n: null, d: new Date(0), list: [1, undefined, 'z'] } },
      [frozen, { plain: true }],
      'text',
      42,
      null,
      { unicode: 'é\u2028', empty: {} },
    ];
    for (const value of values) expect(toJson(value)).toBe(JSON.stringify(value));
  });
});
