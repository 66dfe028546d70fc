import { Wallet } from 'ethers';
import type { ReceiptSigner } from '../../ports/receipt-signer';

/**
 * The receipt signer from a private key held in configuration (Key Vault in Azure). ethers signs with
 * deterministic nonces (RFC 6979), so signing the same document again gives the same signature.
 */
export const privateKeyReceiptSigner = (privateKey: string): ReceiptSigner => {
  const wallet = new Wallet(privateKey);
  return {
    address: async () => wallet.address,
    sign: async (document) => wallet.signTypedData(document.domain, document.types, document.message),
  };
};
