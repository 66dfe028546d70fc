import { z } from 'zod';
import { Id } from './ids';
import { walletAddress } from './wallet';

/**
 * Per-receipt deposit addresses (the contract layer; nothing pays into them yet). A receipt's deposit
 * address is a DepositForwarder clone that DepositFactory creates with CREATE2 and the salt
 * keccak256(abi.encode(split, receiptKey)); the receipt key names the receipt. This file holds what
 * goes into the key; the hashing (an SDK's) is in shared/adapters/evm/deposit-address.ts.
 */

/** Tags the key's encoding (DepositFactory.RECEIPT_KEY_VERSION): a later derivation gets a new tag and never the same keys. */
export const RECEIPT_KEY_VERSION = 'receipt-deposit-v1';

/**
 * The key's ABI types, in order: the version tag, the chain id, the shop's wallet, the receipt id.
 * The chain id keeps one receipt's addresses apart on two chains where the factory and the split
 * share addresses; the wallet scopes the id to its shop, whatever the id's own uniqueness.
 */
export const RECEIPT_KEY_TYPES = ['string', 'uint256', 'address', 'string'] as const;

/** What names a receipt on chain. The receipt id exactly as stored (ids are case-sensitive); the wallet in any case. */
export const ReceiptKeyInput = z.object({
  chainId: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
  wallet: walletAddress,
  receiptId: Id,
});
export type ReceiptKeyInput = z.input<typeof ReceiptKeyInput>;

/**
 * The values the receipt key encodes, in RECEIPT_KEY_TYPES order. Throws on an input no receipt can
 * have: the service derives keys from its own records, so a bad one is a defect, not a caller's error.
 */
export const receiptKeyValues = (input: ReceiptKeyInput): [string, bigint, string, string] => {
  const parsed = ReceiptKeyInput.safeParse(input);
  if (!parsed.success) {
    throw new RangeError(`no receipt key for ${JSON.stringify(input)}: ${parsed.error.issues.map((issue) => `${issue.path.join('.')} ${issue.message}`).join('; ')}`);
  }
  const { chainId, wallet, receiptId } = parsed.data;
  return [RECEIPT_KEY_VERSION, BigInt(chainId), wallet, receiptId];
};
