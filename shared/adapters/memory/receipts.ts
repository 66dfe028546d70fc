import { decodeCursor, encodeCursor } from '../../domain/cursor';
import type { Receipt, ReceiptStatus } from '../../domain/receipt';
import type { ReceiptListFilter, ReceiptRepository, ReceiptStatusQuery } from '../../ports/receipts';
import { MemoryCollection } from './documents';

const newestFirst = (a: Receipt, b: Receipt) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

export class MemoryReceiptRepository extends MemoryCollection<Receipt> implements ReceiptRepository {
  async listByWallet(wallet: string, query: ReceiptListFilter) {
    const after = query.cursor ? decodeCursor(query.cursor) : undefined;
    const matching = this.all()
      .filter((receipt) => receipt.wallet === wallet && (!query.status || receipt.status === query.status))
      .filter((receipt) => query.createdBy === undefined || receipt.createdBy === query.createdBy)
      .filter((receipt) => !after || receipt.createdAt < after.createdAt || (receipt.createdAt === after.createdAt && receipt.id < after.id))
      .sort(newestFirst);
    const receipts = matching.slice(0, query.limit);
    const last = receipts.at(-1);
    return { receipts, nextCursor: matching.length > query.limit && last ? encodeCursor(last.createdAt, last.id) : null };
  }

  async withPendingEvents(limit: number) {
    return this.all()
      .filter((receipt) => receipt.pendingEvents.length > 0)
      .slice(0, limit);
  }

  async inStatuses(statuses: readonly ReceiptStatus[], query: ReceiptStatusQuery) {
    const paidBefore = query.paidBeforeWithoutStock;
    return this.all()
      .filter((receipt) => statuses.includes(receipt.status) && (query.createdBefore === undefined || receipt.createdAt < query.createdBefore))
      .filter((receipt) => paidBefore === undefined || (!receipt.stock && typeof receipt.paidAt === 'number' && receipt.paidAt < paidBefore))
      .sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1))
      .slice(0, query.limit);
  }

  async inStatusesByWallet(statuses: readonly ReceiptStatus[], query: { afterWallet?: string; limit: number }) {
    const after = query.afterWallet ?? '';
    return this.all()
      .filter((receipt) => statuses.includes(receipt.status) && receipt.wallet > after)
      .sort((a, b) => (a.wallet < b.wallet ? -1 : a.wallet > b.wallet ? 1 : b.createdAt - a.createdAt))
      .slice(0, query.limit);
  }
}
