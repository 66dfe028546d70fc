import { describe, expect, it } from 'vitest';
import { newReceipt, type ReceiptStatus } from '../../shared/domain/receipt';
import { receiptCore } from '../support/fixtures';
import { allStores } from '../support/stores';

/**
 * `inStatusesByWallet`, the refund watcher's walk over merchants: receipts in the statuses across all
 * merchants, by wallet, a wallet's newest first, from the wallet after a cursor, at most `limit`.
 */
describe.each(allStores)('receipts in statuses by wallet on the $name store', (store) => {
  const [first, second, third] = ['0x' + '1a'.repeat(20), '0x' + '2b'.repeat(20), '0x' + '3c'.repeat(20)];

  const seed = async () => {
    const deps = await store.make();
    const add = async (wallet: string, receiptId: string, createdAt: number, status: ReceiptStatus = 'refund_requested') =>
      deps.receipts.create(wallet, newReceipt(receiptCore({ receiptId, wallet, status, usd: 1 }), createdAt));
    // Written out of order: the query orders them.
    await add(third, 'C-1', 1_000);
    await add(first, 'A-1', 1_000);
    await add(second, 'B-1', 3_000);
    await add(first, 'A-2', 2_000);
    await add(second, 'B-2', 1_000);
    await add(first, 'A-3', 3_000);
    await add(first, 'A-paid', 4_000, 'paid');
    await add(second, 'B-refunded', 5_000, 'refunded');
    return deps;
  };
  const ids = (receipts: { receiptId: string }[]) => receipts.map((receipt) => receipt.receiptId);

  it('orders by wallet, a wallet’s newest first, only the statuses asked', async () => {
    const deps = await seed();
    expect(ids(await deps.receipts.inStatusesByWallet(['refund_requested'], { limit: 10 }))).toEqual(['A-3', 'A-2', 'A-1', 'B-1', 'B-2', 'C-1']);
    expect(ids(await deps.receipts.inStatusesByWallet(['paid', 'refunded'], { limit: 10 }))).toEqual(['A-paid', 'B-refunded']);
  });

  it('starts after the wallet named and stops at the limit', async () => {
    const deps = await seed();
    expect(ids(await deps.receipts.inStatusesByWallet(['refund_requested'], { afterWallet: first, limit: 10 }))).toEqual(['B-1', 'B-2', 'C-1']);
    expect(ids(await deps.receipts.inStatusesByWallet(['refund_requested'], { afterWallet: '', limit: 2 }))).toEqual(['A-3', 'A-2']);
    expect(ids(await deps.receipts.inStatusesByWallet(['refund_requested'], { afterWallet: second, limit: 2 }))).toEqual(['C-1']);
    expect(await deps.receipts.inStatusesByWallet(['refund_requested'], { afterWallet: third, limit: 2 })).toEqual([]);
  });
});
