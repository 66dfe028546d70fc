import type { ReceiptProofDocument } from '../domain/receipt-proof';

/**
 * The receipt-signing key: signs paid receipts' proofs (EIP-712) and names its address, which the
 * service publishes so buyers can check a proof without it. One key per deployment: in Azure a Key
 * Vault secret (RECEIPT_SIGNING_KEY), locally a key made on the first start and kept in the data
 * folder, in tests a fixed key.
 */
export interface ReceiptSigner {
  /** The key's address, checksummed. */
  address(): Promise<string>;
  /** The EIP-712 signature of the document (65 bytes, 0x hex); the same document always gets the same signature. */
  sign(document: ReceiptProofDocument): Promise<string>;
}
