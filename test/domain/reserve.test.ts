import { describe, expect, it } from 'vitest';
import { ReserveRatios, recommendToken, splitShares, type ReserveHolding } from '../../shared/domain/reserve';
import { billingPeriod, usageCounterId } from '../../shared/domain/billing';
import { ShopConfigUpdate } from '../../shared/domain/shop';
import { describeZodError } from '../../shared/domain/errors';

const holdings = (usd: { USDC?: number | null; USDT?: number | null; ETH?: number | null }): ReserveHolding[] =>
  (['USDC', 'USDT', 'ETH'] as const).filter((symbol) => symbol in usd).map((symbol) => ({ symbol, usd: usd[symbol]! }));

describe('recommendToken', () => {
  it.each([
    // [case, holdings in USD, ratios, recommended token, basis]
    ['empty holdings, no ratios: an even split, first in order', { USDC: 0, USDT: 0, ETH: 0 }, null, 'USDC', 'even_split'],
    ['empty holdings: the largest target', { USDC: 0, USDT: 0, ETH: 0 }, { USDC: 0.2, USDT: 0.3, ETH: 0.5 }, 'ETH', 'ratios'],
    ['all equal with an even split: the tie goes to the first in order', { USDC: 100, USDT: 100, ETH: 100 }, null, 'USDC', 'even_split'],
    ['at the targets: the largest target, not a token aiming for 0', { USDC: 0, USDT: 50, ETH: 50 }, { USDT: 0.5, ETH: 0.5 }, 'USDT', 'ratios'],
    ['the largest shortfall wins', { USDC: 600, USDT: 300, ETH: 100 }, { USDC: 0.4, USDT: 0.3, ETH: 0.3 }, 'ETH', 'ratios'],
    ['too much of one token: another one', { USDC: 1000, USDT: 0, ETH: 0 }, { USDC: 0.5, USDT: 0.5 }, 'USDT', 'ratios'],
    ['equal shortfalls: the larger target', { USDC: 0, USDT: 0, ETH: 100 }, { USDC: 0.3, USDT: 0.6, ETH: 0.1 }, 'USDT', 'ratios'],
    ['equal shortfalls and targets: the order USDC, USDT, ETH', { USDC: 0, USDT: 0, ETH: 200 }, { USDC: 0.25, USDT: 0.25, ETH: 0.5 }, 'USDC', 'ratios'],
    ['ETH price stale: ETH is left out and the others share its target', { USDC: 100, USDT: 300, ETH: null }, { USDC: 0.25, USDT: 0.25, ETH: 0.5 }, 'USDC', 'ratios'],
    ['ETH price stale, even split of the rest', { USDC: 500, USDT: 100, ETH: null }, null, 'USDT', 'even_split'],
    ['ETH price stale while ETH is most wanted: still a stablecoin', { USDC: 0, USDT: 0, ETH: null }, { ETH: 1 }, null, 'ratios'],
    ['a deployment without ETH', { USDC: 10, USDT: 30 }, null, 'USDC', 'even_split'],
  ] as const)('%s', (_, usd, ratios, token, basis) => {
    const answer = recommendToken(holdings(usd), ratios);
    expect(answer.token).toBe(token);
    expect(answer.basis).toBe(basis);
    expect(answer.reason.length).toBeGreaterThan(10);
  });

  it('shows the numbers it used: shares, targets and shortfalls of the valued tokens', () => {
    const answer = recommendToken(holdings({ USDC: 600, USDT: 300, ETH: 100 }), { USDC: 0.4, USDT: 0.3, ETH: 0.3 });
    expect(answer.totalUsd).toBe(1000);
    expect(answer.candidates.map(({ symbol, share, target }) => ({ symbol, share, target }))).toEqual([
      { symbol: 'USDC', share: 0.6, target: 0.4 },
      { symbol: 'USDT', share: 0.3, target: 0.3 },
      { symbol: 'ETH', share: 0.1, target: 0.3 },
    ]);
    expect(answer.candidates[2]!.shortfall).toBeCloseTo(0.2, 12);
    expect(answer.reason).toBe('ETH is 10 % of the holdings against a target of 30 %: the largest shortfall');
  });

  it('says why ETH is left out and scales the other targets', () => {
    const answer = recommendToken(holdings({ USDC: 100, USDT: 300, ETH: null }), { USDC: 0.25, USDT: 0.25, ETH: 0.5 });
    expect(answer.candidates.find((candidate) => candidate.symbol === 'ETH')).toEqual({ symbol: 'ETH', usd: null, share: null, target: null, shortfall: null });
    expect(answer.candidates.find((candidate) => candidate.symbol === 'USDC')).toMatchObject({ share: 0.25, target: 0.5 });
    expect(answer.reason).toContain('ETH left out: no fresh USD price');
  });

  it('with nothing held names the largest target', () => {
    expect(recommendToken(holdings({ USDC: 0, USDT: 0, ETH: 0 }), { USDC: 0.2, USDT: 0.3, ETH: 0.5 }).reason).toBe('nothing is held yet: ETH has the largest target share (50 %)');
  });
});

describe('reserveRatios in the shop configuration', () => {
  const fieldOf = (reserveRatios: unknown) => {
    const parsed = ShopConfigUpdate.safeParse({ reserveRatios });
    return parsed.success ? 'ok' : describeZodError(parsed.error).message;
  };

  it('takes shares in [0, 1] that sum to 1, within 1e-9, and null for none', () => {
    expect(fieldOf({ USDC: 0.5, USDT: 0.5 })).toBe('ok');
    expect(fieldOf({ USDC: 0.1, USDT: 0.2, ETH: 0.7 })).toBe('ok');
    expect(fieldOf({ USDC: 1 / 3, USDT: 1 / 3, ETH: 1 / 3 })).toBe('ok');
    expect(fieldOf({ USDC: 0.5, USDT: 0.5 + 5e-10 })).toBe('ok');
    expect(fieldOf(null)).toBe('ok');
  });

  it.each([
    [{ USDC: 0.5, USDT: 0.4 }, 'reserveRatios: the target shares must sum to 1 (these sum to 0.9)'],
    [{ USDC: 0.5, USDT: 0.5 + 2e-9 }, 'reserveRatios: the target shares must sum to 1 (these sum to 1.000000002)'],
    [{ USDC: 1.5, USDT: -0.5 }, 'reserveRatios.USDC: must be from 0 to 1'],
    [{ USDC: 'half' }, 'reserveRatios.USDC: must be a number from 0 to 1'],
    [{ DOGE: 1 }, 'reserveRatios.DOGE: is not a token this service takes (USDC, USDT, ETH)'],
    [{}, 'reserveRatios: name at least one token (USDC, USDT, ETH) with its target share, or send null for none'],
  ])('refuses %j: %s', (ratios, message) => {
    expect(fieldOf(ratios)).toBe(message);
  });

  it('is a ReserveRatios value a token not named aims for 0 in', () => {
    expect(ReserveRatios.parse({ USDC: 1 })).toEqual({ USDC: 1 });
  });
});

describe('splitShares', () => {
  const payees = [
    { bps: 9_850, role: 'merchant' as const },
    { bps: 100, role: 'platform' as const },
    { bps: 50, role: 'partner' as const },
  ];
  it('rounds every other share down and leaves the remainder to the merchant, as the contract does', () => {
    expect(splitShares(1_000_003n, payees)).toEqual({ merchant: 985_003n, platform: 10_000n, partner: 5_000n });
    expect(splitShares(199n, payees)).toEqual({ merchant: 198n, platform: 1n, partner: 0n });
    expect(splitShares(0n, payees)).toEqual({ merchant: 0n, platform: 0n, partner: 0n });
  });
});

describe('billingPeriod', () => {
  const at = (iso: string) => Date.parse(iso);
  const period = (created: string, now: string) => {
    const { start, end } = billingPeriod(at(created), at(now));
    return [new Date(start).toISOString(), new Date(end).toISOString()];
  };
  it.each([
    ['2024-01-15T18:30:00Z', '2024-01-15T19:00:00Z', '2024-01-15T00:00:00.000Z', '2024-02-15T00:00:00.000Z'],
    ['2024-01-15T18:30:00Z', '2024-02-14T23:59:59Z', '2024-01-15T00:00:00.000Z', '2024-02-15T00:00:00.000Z'],
    ['2024-01-15T18:30:00Z', '2024-02-15T00:00:00Z', '2024-02-15T00:00:00.000Z', '2024-03-15T00:00:00.000Z'],
    ['2024-01-31T10:00:00Z', '2024-02-29T12:00:00Z', '2024-02-29T00:00:00.000Z', '2024-03-31T00:00:00.000Z'],
    ['2024-01-31T10:00:00Z', '2024-02-10T12:00:00Z', '2024-01-31T00:00:00.000Z', '2024-02-29T00:00:00.000Z'],
    ['2023-03-05T00:00:00Z', '2024-01-02T00:00:00Z', '2023-12-05T00:00:00.000Z', '2024-01-05T00:00:00.000Z'],
    ['2023-03-05T00:00:00Z', '2023-12-20T00:00:00Z', '2023-12-05T00:00:00.000Z', '2024-01-05T00:00:00.000Z'],
  ])('a key made %s, at %s: %s to %s', (created, now, start, end) => {
    expect(period(created, now)).toEqual([start, end]);
  });

  it('names one counter per key and period', () => {
    expect(usageCounterId('sub1', billingPeriod(at('2024-01-15T18:30:00Z'), at('2024-02-01T00:00:00Z')))).toBe('usage:sub1:2024-01-15');
  });
});
