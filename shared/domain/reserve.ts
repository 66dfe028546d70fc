/**
 * The merchant's reserve: what it holds of each token the deployment accepts (in its split, not yet
 * distributed, and in its wallet), valued in USD, against the target shares it set in the shop
 * configuration (`reserveRatios`); and which token the next payment should ask for to move the
 * holdings toward those targets. Pure: balances and prices come in as values.
 */
import { z } from 'zod';
import { payTokens, PayTokenSymbol } from './payment';
import { formatUnits } from './units';

/** How far the shares may sum from 1 (decimal fractions such as 0.1 + 0.2 do not add up exactly). */
export const RATIO_SUM_TOLERANCE = 1e-9;

const tokenList = payTokens.join(', ');

/**
 * Token symbol → target share of the reserve's USD value, each in [0, 1], together 1. A token not
 * named has a target of 0. Which tokens a deployment accepts is checked where the configuration is
 * written (the deployment's token list is configuration, not domain).
 */
export const ReserveRatios = z
  .record(z.string(), z.number({ error: 'must be a number from 0 to 1' }).min(0, 'must be from 0 to 1').max(1, 'must be from 0 to 1'))
  .superRefine((ratios, ctx) => {
    const symbols = Object.keys(ratios);
    if (symbols.length === 0) {
      ctx.addIssue({ code: 'custom', message: `name at least one token (${tokenList}) with its target share, or send null for none` });
      return;
    }
    for (const symbol of symbols) {
      if (!(payTokens as readonly string[]).includes(symbol)) ctx.addIssue({ code: 'custom', path: [symbol], message: `is not a token this service takes (${tokenList})` });
    }
    const sum = Object.values(ratios).reduce((total, share) => total + share, 0);
    if (Math.abs(sum - 1) > RATIO_SUM_TOLERANCE) {
      ctx.addIssue({ code: 'custom', message: `the target shares must sum to 1 (these sum to ${Number(sum.toFixed(12))})` });
    }
  })
  .describe('token symbol → target share of the reserve (0 to 1, summing to 1); tokens not named aim for 0');
export type ReserveRatios = z.output<typeof ReserveRatios>;

/** A split payee as the service records it (merchant first). */
interface Payee {
  bps: number;
  role: 'merchant' | 'platform' | 'partner';
}

/**
 * What the split's `distribute` would pay each role of `amount` (atomic units): every payee but the
 * merchant gets its basis points rounded down, the merchant the rest (the contract's own rule).
 */
export const splitShares = (amount: bigint, payees: readonly Payee[]): Record<Payee['role'], bigint> => {
  const shares: Record<Payee['role'], bigint> = { merchant: 0n, platform: 0n, partner: 0n };
  let others = 0n;
  for (const payee of payees) {
    if (payee.role === 'merchant') continue;
    const share = (amount * BigInt(payee.bps)) / 10_000n;
    shares[payee.role] += share;
    others += share;
  }
  shares.merchant = amount - others;
  return shares;
};

/** An amount's USD value at `usdPerToken` (null: no fresh price), unrounded: shares are computed from it. */
export const usdValue = (amount: bigint, decimals: number, usdPerToken: number | null): number | null =>
  usdPerToken === null ? null : Number(formatUnits(amount, decimals)) * usdPerToken;

export const roundCents = (usd: number): number => Math.round(usd * 100) / 100;

/** A token's holding as the recommendation sees it: its USD value, or null when it cannot be valued now. */
export interface ReserveHolding {
  symbol: PayTokenSymbol;
  usd: number | null;
}

export interface RecommendationCandidate {
  symbol: PayTokenSymbol;
  usd: number | null;
  /** Share of the valued holdings (0 when nothing is held); null when the token cannot be valued. */
  share: number | null;
  /** Target share among the tokens that can be valued; null when the token cannot be valued. */
  target: number | null;
  /** target − share: positive when the reserve holds too little of it. */
  shortfall: number | null;
}

export interface Recommendation {
  /** The token the next payment should ask for; null when no token can be valued. */
  token: PayTokenSymbol | null;
  reason: string;
  /** `ratios`: the shop's reserveRatios; `even_split`: none are set, so every token aims for an equal share. */
  basis: 'ratios' | 'even_split';
  totalUsd: number;
  candidates: RecommendationCandidate[];
}

/** Shortfalls this close are equal (float noise). */
const EPSILON = 1e-12;

const percent = (fraction: number) => `${Number((fraction * 100).toFixed(2))} %`;

/**
 * The token the next payment should ask for: among the tokens that can be valued, the one whose share
 * of the holdings is furthest below its target (largest target − share). Ties go to the larger
 * target, then to the order of `payTokens` (USDC, USDT, ETH). A token that cannot be valued (ETH with
 * a stale feed) is left out, and the targets of the others are scaled up to sum to 1 again; ETH could
 * not be quoted then anyway. Without ratios every token aims for an equal share.
 */
export const recommendToken = (holdings: readonly ReserveHolding[], ratios: ReserveRatios | null): Recommendation => {
  const basis = ratios ? 'ratios' : 'even_split';
  const valued = holdings.filter((holding) => holding.usd !== null);
  const unvalued = holdings.filter((holding) => holding.usd === null).map((holding) => holding.symbol);
  const totalUsd = roundCents(valued.reduce((total, holding) => total + holding.usd!, 0));
  const rawTargets = new Map(valued.map((holding) => [holding.symbol, ratios ? (ratios[holding.symbol] ?? 0) : 1]));
  const targetSum = [...rawTargets.values()].reduce((total, target) => total + target, 0);
  const exact = valued.reduce((total, holding) => total + holding.usd!, 0);
  const candidates: RecommendationCandidate[] = holdings.map((holding) => {
    if (holding.usd === null) return { symbol: holding.symbol, usd: null, share: null, target: null, shortfall: null };
    const target = targetSum > 0 ? rawTargets.get(holding.symbol)! / targetSum : 0;
    const share = exact > 0 ? holding.usd / exact : 0;
    return { symbol: holding.symbol, usd: roundCents(holding.usd), share, target, shortfall: target - share };
  });
  const left = unvalued.length > 0 ? `; ${unvalued.join(', ')} left out: no fresh USD price` : '';
  if (valued.length === 0) return { token: null, reason: `no accepted token can be valued now${left}`, basis, totalUsd, candidates };
  if (targetSum === 0) {
    return { token: null, reason: `the target shares name no token that can be valued now${left}`, basis, totalUsd, candidates };
  }
  const order = (symbol: PayTokenSymbol) => payTokens.indexOf(symbol);
  const best = candidates
    .filter((candidate) => candidate.shortfall !== null)
    .sort((a, b) => {
      if (Math.abs(a.shortfall! - b.shortfall!) > EPSILON) return b.shortfall! - a.shortfall!;
      if (Math.abs(a.target! - b.target!) > EPSILON) return b.target! - a.target!;
      return order(a.symbol) - order(b.symbol);
    })[0]!;
  const aim = basis === 'ratios' ? `a target of ${percent(best.target!)}` : `an even split's ${percent(best.target!)}`;
  const reason =
    exact === 0
      ? `nothing is held yet: ${best.symbol} has the largest target share (${percent(best.target!)})${left}`
      : best.shortfall! <= EPSILON
        ? `the holdings are at their targets: ${best.symbol} has the largest target share (${percent(best.target!)})${left}`
        : `${best.symbol} is ${percent(best.share!)} of the holdings against ${aim}: the largest shortfall${left}`;
  return { token: best.symbol, reason, basis, totalUsd, candidates };
};

const Amounts = z.object({
  amount: z.string().describe('atomic units, decimal string'),
  display: z.string().describe('in whole tokens'),
});

export const ReserveTokenView = z.object({
  symbol: PayTokenSymbol,
  address: z.string(),
  decimals: z.number().int(),
  split: z
    .object({
      balance: z.string().describe("the split's whole balance of the token (all payees' parts and credits)"),
      merchant: Amounts.describe("the merchant's part: its share of what distribute would pay now, plus what the split owes it already"),
    })
    .nullable()
    .describe('null when the merchant has no split'),
  wallet: Amounts.describe("the merchant wallet's own balance"),
  total: Amounts.describe("the merchant's part in the split, with its part of what waits at its paid receipts' deposit addresses for their sweep into the split, plus the wallet's balance"),
  usdPrice: z.number().nullable().describe('USD per whole token: 1 for the stablecoins, the feed for ETH; null when the feed is stale'),
  usdValue: z.number().nullable(),
  share: z.number().nullable().describe('share of the valued holdings (0 to 1); null when the token cannot be valued'),
  targetShare: z.number().nullable().describe('the reserveRatios entry (0 when not named); null when no ratios are set'),
});

const EthPriceView = z
  .object({ usd: z.number().nullable(), updatedAt: z.number().int().nullable(), stale: z.boolean() })
  .nullable()
  .describe('the ETH/USD feed as read (null when ETH is not accepted); stale: older than its heartbeat or unreadable, so ETH is not valued');

export const ReserveBalancesView = z.object({
  ok: z.literal(true),
  wallet: z.string(),
  split: z.string().nullable(),
  note: z.string().nullable().describe('what the figures leave out (no split deployed, a stale price)'),
  blockNumber: z.number().int().describe('the block the balances were read at'),
  tokens: z.array(ReserveTokenView),
  totalUsd: z.number().describe('the sum of the valued holdings'),
  ethPrice: EthPriceView,
  targetRatios: z.record(z.string(), z.number()).nullable().describe("the shop's reserveRatios; null: none set"),
});

export const ReserveRecommendationView = z.object({
  ok: z.literal(true),
  token: PayTokenSymbol.nullable(),
  reason: z.string(),
  basis: z.enum(['ratios', 'even_split']).describe('even_split: no reserveRatios are set, so each accepted token aims for an equal share'),
  totalUsd: z.number(),
  candidates: z.array(
    z.object({
      symbol: PayTokenSymbol,
      usd: z.number().nullable(),
      share: z.number().nullable(),
      target: z.number().nullable(),
      shortfall: z.number().nullable(),
    }),
  ),
  ethPrice: EthPriceView,
  blockNumber: z.number().int(),
});
