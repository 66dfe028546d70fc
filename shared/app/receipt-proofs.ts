/**
 * Receipt proofs: `GET /api/receipts/{id}/proof` (the merchant's own receipts), `GET
 * /api/portal/{id}/proof` (the buyer's, by receipt id) and `GET /.well-known/receipt-signer`. The proof
 * is written with `paid` (shared/app/receipt-status.ts); a receipt paid before proofs existed, or
 * while the signer was unavailable, gets it here on the first request, stored so it never changes.
 */
import { DomainError } from '../domain/errors';
import { ID_PATTERN } from '../domain/query-params';
import { proofDomain, wasPaid, type ReceiptProof } from '../domain/receipt-proof';
import type { AppDeps } from './deps';
import { withEtagRetry } from './etag-retry';
import { findReceipt } from './payments/portal';
import { signReceiptProof, type ProofSigningDeps } from './receipt-signing';

type ProofDeps = ProofSigningDeps & Pick<AppDeps, 'receipts'>;

const notFound = (id: string) => new DomainError('not_found', `receipt ${id} not found`);

/** The stored proof, or one signed and stored now; 409 receipt_not_paid for a receipt never paid. */
const proofOf = (deps: ProofDeps, wallet: string, receiptId: string): Promise<ReceiptProof> =>
  withEtagRetry<ReceiptProof>(
    async ({ write }) => {
      const stored = await deps.receipts.get(wallet, receiptId);
      if (!stored) throw notFound(receiptId);
      const receipt = stored.value;
      if (!wasPaid(receipt)) throw new DomainError('receipt_not_paid', `receipt ${receiptId} is ${receipt.status}: only a paid receipt has a proof`, { status: receipt.status });
      if (receipt.proof) return receipt.proof;
      const proof = await signReceiptProof(deps, receipt);
      if (!proof) throw new DomainError('receipt_not_paid', `receipt ${receiptId} has no payment on chain to prove`, { status: receipt.status });
      // Only the proof is added: the receipt's updatedAt stays, as nothing the merchant sees changed.
      await write(() => deps.receipts.replace(wallet, { ...receipt, proof }, stored.etag));
      return proof;
    },
    {
      exhausted: () => {
        throw new DomainError('conflict', 'the receipt kept changing; try again');
      },
    },
  );

/** A merchant's own receipt's proof: another merchant's receipt is not found. */
export const getReceiptProof = async (deps: ProofDeps, wallet: string, receiptId: string): Promise<ReceiptProof> => {
  if (!ID_PATTERN.test(receiptId)) throw notFound(receiptId);
  return proofOf(deps, wallet, receiptId);
};

/** The buyer's copy, by receipt id alone (the receipt id is the portal's capability). */
export const getPortalReceiptProof = async (deps: ProofDeps & Pick<AppDeps, 'claims'>, receiptId: string): Promise<ReceiptProof> => {
  const stored = await findReceipt(deps, receiptId);
  return proofOf(deps, stored.value.wallet, receiptId);
};

/**
 * What a verifier pins: the signer's address and the domain proofs are signed in now, and the keys
 * rotated out with when each stopped signing: a proof by one of those counts for a payment made
 * (`paidAt`) before then. A retired address that is the current one again is not listed as retired.
 */
export const receiptSignerInfo = async (deps: ProofSigningDeps) => {
  const address = await deps.receiptSigner.address();
  return {
    address,
    chainId: deps.settings.chainId,
    domain: proofDomain(deps.settings.brandName, deps.settings.chainId),
    retired: deps.settings.retiredReceiptSigners.filter((key) => key.address !== address.toLowerCase()).sort((a, b) => b.retiredAt - a.retiredAt),
  };
};
