/**
 * A shop's newest receipts, read page by page up to a cap: what a view or a tally of one shop walks
 * (the console's summary, the split's inflows, the deposits a sweep names).
 */
import type { Receipt } from '../domain/receipt';
import type { ReceiptListFilter } from '../ports/receipts';
import type { AppDeps } from './deps';

/**
 * Hands each of the shop's newest receipts (in `status`, when given) to `visit`, newest first, `max`
 * at most, `pageSize` a read; `truncated` when more were left unread.
 */
export const eachShopReceipt = async (
  deps: Pick<AppDeps, 'receipts'>,
  wallet: string,
  options: { max: number; pageSize: number; status?: ReceiptListFilter['status'] },
  visit: (receipt: Receipt) => void,
): Promise<{ truncated: boolean }> => {
  let read = 0;
  let cursor: string | undefined;
  do {
    const page = await deps.receipts.listByWallet(wallet, { limit: Math.min(options.pageSize, options.max - read), ...(options.status && { status: options.status }), ...(cursor && { cursor }) });
    for (const receipt of page.receipts) {
      read++;
      visit(receipt);
    }
    cursor = page.nextCursor ?? undefined;
  } while (cursor && read < options.max);
  return { truncated: cursor !== undefined };
};
