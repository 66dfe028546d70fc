/**
 * The payment ledger: one transaction pays one thing, on every path a payment arrives by — a hash
 * the portal reports, the watcher's find, a card on-ramp's delivery, an x402 settlement. The
 * transaction is claimed for what it pays (a receipt, a plan) before that becomes paid, and the
 * claim never moves: a second receipt it is reported for is refused `transaction_already_used`.
 */
import { DomainError } from '../../domain/errors';
import { paymentTxClaimId } from '../../domain/payment';
import type { AppDeps } from '../deps';
import { holdClaim } from '../claims';

/** What a receipt is called in the ledger (and in every claim that names a receipt). */
export const receiptOwner = (receipt: { wallet: string; receiptId: string }) => `${receipt.wallet}:${receipt.receiptId}`;

/** Claims `hash` for `owner`; the same owner claiming it again is fine, another is refused. */
export const claimPaymentTransaction = async (deps: Pick<AppDeps, 'claims' | 'clock'>, chainId: number, hash: string, owner: string): Promise<void> => {
  const id = paymentTxClaimId(chainId, hash);
  if (!(await holdClaim(deps.claims, { id, owner, createdAt: deps.clock.now() }))) {
    throw new DomainError('transaction_already_used', `transaction ${hash.toLowerCase()} already paid something else`, { field: 'txHash' });
  }
};
