/**
 * The console's overview of a merchant's receipts: what was paid today (UTC) and how many receipts
 * are in each status, read from the newest receipts a page at a time, up to a bound (the store has
 * no aggregate query; a bound keeps the page fast for a merchant with many receipts, and the answer
 * says when it stopped short).
 */
import { DAY_MS } from '../domain/split';
import { receiptStatuses, type ReceiptStatus } from '../domain/receipt';
import { eachShopReceipt } from './shop-receipts';
import type { AppDeps } from './deps';

export const SUMMARY_MAX_RECEIPTS = 1_000;
const PAGE = 200;

export interface ReceiptSummary {
  /** Start of the UTC day the totals are for (Unix ms). */
  dayStart: number;
  paidToday: { count: number; usd: number };
  byStatus: Record<ReceiptStatus, number>;
  /** How many receipts were counted, and whether older ones were left out. */
  counted: number;
  truncated: boolean;
}

export const summarizeReceipts = async (deps: Pick<AppDeps, 'receipts' | 'clock'>, wallet: string, maxReceipts = SUMMARY_MAX_RECEIPTS): Promise<ReceiptSummary> => {
  const now = deps.clock.now();
  const dayStart = now - (now % DAY_MS);
  const byStatus = Object.fromEntries(receiptStatuses.map((status) => [status, 0])) as Record<ReceiptStatus, number>;
  let paidCents = 0;
  let paidCount = 0;
  let counted = 0;
  const { truncated } = await eachShopReceipt(deps, wallet, { max: maxReceipts, pageSize: PAGE }, (receipt) => {
    counted++;
    byStatus[receipt.status]++;
    if (receipt.paidAt !== undefined && receipt.paidAt !== null && receipt.paidAt >= dayStart && receipt.paidAt <= now) {
      paidCount++;
      paidCents += Math.round(receipt.customerTotalUsd * 100);
    }
  });
  return { dayStart, paidToday: { count: paidCount, usd: paidCents / 100 }, byStatus, counted, truncated };
};
