/**
 * A subscription's billing period and what the billing balance answers. Pure: the clock's reading and
 * the subscription's creation time come in as values.
 */
import { z } from 'zod';
import { Plan } from './subscription';
import { PayTokenSymbol } from './payment';

export interface BillingPeriod {
  /** Unix ms, inclusive. */
  start: number;
  /** Unix ms, exclusive: the next period's start. */
  end: number;
}

/** The day `day` of a month (UTC midnight), or the month's last day when it is shorter (the 31st → 30 April, 28/29 February). */
const anchorIn = (year: number, month: number, day: number): number => {
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  return Date.UTC(year, month, Math.min(day, lastDay));
};

/**
 * The monthly period, in UTC, that holds `at`: periods start at midnight UTC on the day of the month
 * the subscription was created (the last day of shorter months for the 29th–31st) and end where the
 * next one starts. The first period starts on the creation day itself, so it may be a few hours short.
 */
export const billingPeriod = (createdAt: number, at: number): BillingPeriod => {
  const created = new Date(createdAt);
  const day = created.getUTCDate();
  const when = new Date(at);
  let year = when.getUTCFullYear();
  let month = when.getUTCMonth();
  if (anchorIn(year, month, day) > at) month -= 1;
  if (month < 0) {
    month = 11;
    year -= 1;
  }
  const start = anchorIn(year, month, day);
  const end = month === 11 ? anchorIn(year + 1, 0, day) : anchorIn(year, month + 1, day);
  return { start, end };
};

/** The counter of one subscription's requests in one period (a document in the `claims` container). */
export const usageCounterId = (subscriptionId: string, period: BillingPeriod) => `usage:${subscriptionId}:${new Date(period.start).toISOString().slice(0, 10)}`;

/** How long a period's counter is kept after the period ends (a year of history). */
export const USAGE_RETENTION_MS = 366 * 24 * 60 * 60 * 1000;

const FeeView = z.object({
  symbol: PayTokenSymbol,
  address: z.string(),
  decimals: z.number().int(),
  paid: z.string().describe("atomic units distributed to the platform's payee in the period"),
  paidDisplay: z.string(),
  paidUsd: z.number().nullable().describe('null: ETH with a stale feed'),
  accrued: z.string().describe("the platform's share (its basis points) of the payments into the split in the period, distributed or not"),
  accruedDisplay: z.string(),
  accruedUsd: z.number().nullable(),
});

export const BillingBalanceView = z.object({
  ok: z.literal(true),
  wallet: z.string(),
  subscriptionId: z.string().describe('the key this answer is about: the one that asked'),
  plan: z.object({
    name: Plan.describe("the key's plan: its quota applies to this key"),
    walletPlan: Plan.describe('the plan new keys of this wallet get now'),
    source: z.enum(['starter', 'x402', 'admin']).describe('how the wallet has its plan: the free starter plan, paid by x402, or granted'),
    endsAt: z.number().int().nullable().describe("the end of the wallet's paid or granted term (null: no end)"),
  }),
  quota: z.object({ requestsPerMinute: z.number().int() }),
  usage: z.object({
    requests: z.number().int().describe('requests made with this key in the period, this one included (counted as they are let through; see counted)'),
    counted: z.string().describe('how the count is kept'),
  }),
  period: z.object({ start: z.number().int(), end: z.number().int() }).describe('the monthly period (Unix ms, end exclusive), from the day the key was made'),
  renewsAt: z.number().int().describe('when the plan must be paid again (a paid term), else when the next period starts'),
  platformFees: z.object({
    split: z.string().nullable().describe('null: no split, so no fees'),
    platformWallet: z.string().nullable(),
    platformFeeBps: z.number().int(),
    fromBlock: z.number().int().nullable(),
    toBlock: z.number().int().nullable(),
    complete: z.boolean().describe('false when the period spans more blocks than are read for one answer: the figures then start at fromBlock'),
    tokens: z.array(FeeView),
    paidUsd: z.number().describe('the valued fees distributed to the platform in the period'),
    accruedUsd: z.number(),
    note: z.string().nullable(),
  }),
});
export type BillingBalanceView = z.output<typeof BillingBalanceView>;
