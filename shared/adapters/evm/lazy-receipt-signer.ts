import { DependencyUnavailableError } from '../../ports/errors';
import type { ReceiptSigner } from '../../ports/receipt-signer';

/** The receipt signer of a private key, with ethers loaded on its first use (a cold start does not pay for it). */
export const lazyReceiptSigner = (privateKey: string): ReceiptSigner => {
  let signer: Promise<ReceiptSigner> | undefined;
  const load = () => (signer ??= import('./receipt-signer').then(({ privateKeyReceiptSigner }) => privateKeyReceiptSigner(privateKey)));
  return { address: async () => (await load()).address(), sign: async (document) => (await load()).sign(document) };
};

/** No key configured: proofs answer 503, and paid receipts get theirs on the first request once a key is set. */
export const unavailableReceiptSigner = (reason: string): ReceiptSigner => {
  const refuse = async (): Promise<never> => {
    throw new DependencyUnavailableError('receipt-signer', reason);
  };
  return { address: refuse, sign: refuse };
};
