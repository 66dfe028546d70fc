import { proofDomain, proofMessageFor, receiptProofDocument, type ReceiptProof } from '../domain/receipt-proof';
import type { Receipt } from '../domain/receipt';
import type { AppDeps } from './deps';

export type ProofSigningDeps = Pick<AppDeps, 'receiptSigner' | 'settings'>;

/**
 * The signed proof of a paid receipt, from its stored payment facts; undefined when it has nothing
 * on chain to prove. A signer that cannot sign throws (503 on the proof routes).
 */
export const signReceiptProof = async (deps: ProofSigningDeps, receipt: Receipt): Promise<ReceiptProof | undefined> => {
  const message = proofMessageFor(receipt, { tokens: deps.settings.tokens });
  if (!message) return undefined;
  const document = receiptProofDocument(proofDomain(deps.settings.brandName, deps.settings.chainId), message);
  const [signature, signer] = await Promise.all([deps.receiptSigner.sign(document), deps.receiptSigner.address()]);
  return { ...document, signature, signer };
};

/**
 * The proof written with the `paid` change itself (shared/app/receipt-status.ts), so every way to
 * `paid` gets one that never changes. Never in the way of the payment: without a signer in the deps,
 * or when signing fails, the receipt is paid without one and gets it on the first request.
 */
export const proofAtPaid = async (deps: Partial<ProofSigningDeps>, receipt: Receipt): Promise<ReceiptProof | null> => {
  if (!deps.receiptSigner || !deps.settings) return null;
  try {
    return (await signReceiptProof({ receiptSigner: deps.receiptSigner, settings: deps.settings }, receipt)) ?? null;
  } catch {
    return null;
  }
};
