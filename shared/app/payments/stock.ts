/**
 * Stock follows the money: a receipt's tracked items are taken from inventory when it is paid, never
 * below zero. What was missing is recorded on the receipt (the buyer has paid; the merchant decides).
 */
import type { Receipt } from '../../domain/receipt';
import type { AppDeps } from '../deps';
import { withEtagRetry } from '../etag-retry';
import { takeClaim } from '../claims';

type StockDeps = Pick<AppDeps, 'inventory' | 'receipts' | 'claims' | 'clock'>;

/** A sweep leaves alone a receipt paid this recently: its own commit may still be running. */
const SWEEP_AFTER_MS = 5 * 60_000;

/** Takes up to `qty` of a tracked item (conditional on its ETag); answers how many were missing. */
const take = (deps: StockDeps, wallet: string, sku: string, qty: number): Promise<number> =>
  withEtagRetry<number>(
    async ({ write }) => {
      const stored = await deps.inventory.findBySku(wallet, sku);
      // Gone, or not tracked (-1 counts as always in stock): nothing to take.
      if (!stored || stored.value.stockQty < 0) return 0;
      const taken = Math.min(qty, stored.value.stockQty);
      if (taken > 0) {
        const item = { ...stored.value, stockQty: stored.value.stockQty - taken, updatedAt: Math.max(deps.clock.now(), stored.value.updatedAt) };
        await write(() => deps.inventory.replace(item, stored.etag));
      }
      return qty - taken;
    },
    {
      exhausted: () => {
        throw new Error(`stock of ${sku} kept changing`);
      },
    },
  );

/**
 * Commits the stock of a paid receipt, once: the call that moved the receipt to `paid` runs it and
 * records the result on the receipt (`stock`); the sweep below finishes commits that were cut short.
 * Each line is claimed (create-only) before its item is decremented, so no line is ever taken twice;
 * a crash between a claim and its decrement leaves that line untaken (recorded as nothing missing)
 * rather than taken twice. Lines with no sku (receipts sent whole, point of sale) take nothing.
 */
export const commitStock = async (deps: StockDeps, wallet: string, receiptId: string): Promise<Receipt['stock']> => {
  const stored = await deps.receipts.get(wallet, receiptId);
  if (!stored || stored.value.stock) return stored?.value.stock ?? null;
  const shortfall: Array<{ sku: string; missing: number }> = [];
  for (const [index, line] of stored.value.lineItems.entries()) {
    if (!line.sku || !line.qty) continue;
    const claimId = `stock:${receiptId}:${index}`;
    if (!(await takeClaim(deps.claims, { id: claimId, owner: wallet, createdAt: deps.clock.now() })).taken) continue;
    const missing = await take(deps, wallet, line.sku, line.qty);
    if (missing > 0) shortfall.push({ sku: line.sku, missing });
  }
  const stock = { committedAt: deps.clock.now(), shortfall };
  await withEtagRetry<void>(
    async ({ write }) => {
      const latest = await deps.receipts.get(wallet, receiptId);
      if (!latest || latest.value.stock) return;
      await write(() => deps.receipts.replace(wallet, { ...latest.value, stock }, latest.etag));
    },
    { exhausted: () => undefined },
  );
  return stock;
};

/** Paid receipts whose stock commit was cut short (a crash between the status write and the commit). */
export const commitPendingStock = async (deps: StockDeps, limit = 50): Promise<number> => {
  const due = await deps.receipts.inStatuses(['paid', 'reconciled', 'refund_requested', 'refunded'], { limit, paidBeforeWithoutStock: deps.clock.now() - SWEEP_AFTER_MS });
  for (const receipt of due) await commitStock(deps, receipt.wallet, receipt.receiptId);
  return due.length;
};
