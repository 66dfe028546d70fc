/**
 * The payment ledger: one transfer pays one thing, on every path a payment arrives by — a hash the
 * portal reports, the watcher's find, a card on-ramp's delivery, an x402 settlement. The transfers a
 * payment counts are claimed for what they pay (a receipt, a plan) before that becomes paid, and a
 * claim never moves. The ledger claims transfers, not whole transactions: one transaction can carry
 * several payments (an exchange's batch withdrawal, a bundle of user operations), each its own
 * receipt's. A transaction that moved nothing (a reverted payment) is claimed whole.
 */
import { DomainError } from '../../domain/errors';
import { paymentTxClaimId } from '../../domain/payment';
import type { AppDeps } from '../deps';
import { holdClaim } from '../claims';

/** What a receipt is called in the ledger (and in every claim that names a receipt). */
export const receiptOwner = (receipt: { wallet: string; receiptId: string }) => `${receipt.wallet}:${receipt.receiptId}`;

/** One transfer of a transaction in the ledger: its log index (-1: the transaction's own ETH value). */
export const paymentTransferClaimId = (chainId: number, hash: string, logIndex: number) => `${paymentTxClaimId(chainId, hash)}:${logIndex}`;

type LedgerDeps = Pick<AppDeps, 'claims' | 'clock'>;

/**
 * Claims for `owner` the transfers of `hash` at `logIndexes` (none: the whole transaction, which moved
 * nothing). The same owner claiming again is fine; a transfer another holds is refused.
 */
export const claimPayment = async (deps: LedgerDeps, chainId: number, hash: string, owner: string, logIndexes: readonly number[] = []): Promise<void> => {
  const ids = logIndexes.length > 0 ? logIndexes.map((index) => paymentTransferClaimId(chainId, hash, index)) : [paymentTxClaimId(chainId, hash)];
  for (const id of ids) {
    if (!(await holdClaim(deps.claims, { id, owner, createdAt: deps.clock.now() }))) {
      throw new DomainError('transaction_already_used', `transaction ${hash.toLowerCase()} already paid something else`, { field: 'txHash' });
    }
  }
};

/** Whether a transfer pays something other than `owner`: it, or its whole transaction, is claimed by another. */
export const paysSomethingElse = async (deps: Pick<AppDeps, 'claims'>, chainId: number, hash: string, logIndex: number, owner: string): Promise<boolean> => {
  const held = await Promise.all([paymentTransferClaimId(chainId, hash, logIndex), paymentTxClaimId(chainId, hash)].map((id) => deps.claims.get(id, id)));
  return held.some((claim) => claim !== undefined && claim.value.owner !== owner);
};
