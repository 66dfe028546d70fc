import type { Receipt, ReceiptStatus } from '../domain/receipt';
import type { DocumentCollection } from './documents';


export interface ReceiptPage {
  receipts: Receipt[];
  /** Opaque; null on the last page. */
  nextCursor: string | null;
}

/** Receipts by merchant wallet, plus the two queries the service needs. */
export interface ReceiptRepository extends DocumentCollection<Receipt> {
  /** Newest first (createdAt, then id), a page at a time; one partition. */
  listByWallet(wallet: string, query: ReceiptListFilter): Promise<ReceiptPage>;
  /** Receipts whose status events were written but not yet queued (the events relay's work; cross-partition, rare). */
  withPendingEvents(limit: number): Promise<Receipt[]>;
  /**
   * Receipts in any of these statuses across all merchants, oldest first (the timers' work: expiry,
   * reconciliation, refunds); `createdBefore` narrows to those made earlier (Unix ms).
   */
  inStatuses(statuses: readonly ReceiptStatus[], query: ReceiptStatusQuery): Promise<Receipt[]>;
  /**
   * Receipts in any of these statuses across all merchants, by wallet and a wallet's newest first, of
   * the wallets after `afterWallet` (all of them when absent or empty): a walk over merchants that one
   * merchant's many receipts cannot stall (the refund watcher's).
   */
  inStatusesByWallet(statuses: readonly ReceiptStatus[], query: { afterWallet?: string; limit: number }): Promise<Receipt[]>;
}

export interface ReceiptListFilter {
  limit: number;
  cursor?: string;
  status?: ReceiptStatus;
  /** Only receipts whose webhooks this subscription (API key) signs. */
  createdBy?: string;
}

export interface ReceiptStatusQuery {
  limit: number;
  createdBefore?: number;
  /** Only receipts paid before this time (Unix ms) whose stock has not been committed. */
  paidBeforeWithoutStock?: number;
}
