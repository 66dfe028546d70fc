import { DomainError } from '../../domain/errors';
import type { ReceiptStatus } from '../../domain/receipt';
import type { AppDeps } from '../deps';
import { changeStatus } from '../receipt-status';

type ExpiryDeps = Pick<AppDeps, 'receipts' | 'merchants' | 'queue' | 'clock' | 'settings'>;

/** The statuses of a receipt nobody has paid yet. */
export const UNPAID_STATUSES: readonly ReceiptStatus[] = ['generated', 'pending', 'link_opened', 'buyer_logged_in', 'checkout_initialized', 'checkout_success'];

export const EXPIRED_FAILURE = 'PORTAL_SESSION_EXPIRED';

export interface ExpiryReport {
  expired: string[];
  /** Receipts that changed meanwhile (paid, gone, or kept changing): left for what moved them. */
  skipped: string[];
}

/**
 * The timer's work: unpaid receipts made longer ago than `settings.payments.receiptExpiryMs` fail
 * with PORTAL_SESSION_EXPIRED, oldest first, up to `limit` a run. A valid payment that arrives later
 * still makes such a receipt paid (the state machine lets a failed receipt become paid).
 */
export const expireReceipts = async (deps: ExpiryDeps, limit = 100): Promise<ExpiryReport> => {
  const createdBefore = deps.clock.now() - deps.settings.payments.receiptExpiryMs;
  const report: ExpiryReport = { expired: [], skipped: [] };
  for (const receipt of await deps.receipts.inStatuses(UNPAID_STATUSES, { limit, createdBefore })) {
    try {
      const outcome = await changeStatus(deps, {
        wallet: receipt.wallet,
        receiptId: receipt.receiptId,
        status: 'failed',
        actor: 'service',
        failure: { code: EXPIRED_FAILURE },
      });
      (outcome.ignored ? report.skipped : report.expired).push(receipt.receiptId);
    } catch (error) {
      // One receipt that is gone or kept changing does not hold up the others; a store failure does.
      if (!(error instanceof DomainError)) throw error;
      report.skipped.push(receipt.receiptId);
    }
  }
  return report;
};
