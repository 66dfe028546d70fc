import { z } from 'zod';
import { toCents } from './money';
import { ZERO_ADDRESS, type PayToken, type Quote } from './payment';
import type { ReceiptLine } from './pricing';

/**
 * A paid receipt's proof: an EIP-712 typed-data document the service signs with its receipt-signing
 * key, which anyone can check without the service (ethers' `verifyTypedData`, viem's, a wallet's)
 * against the signer it publishes at `/.well-known/receipt-signer`. The rules are here, pure; the
 * signing is the `ReceiptSigner` port's. `docs/decisions.md` ("Receipt proofs") has the reasons.
 *
 * The lines are an EIP-712 array of `Line` structs inside the signed message, so EIP-712 itself
 * hashes them: `keccak256` of the concatenated `hashStruct(Line)` of each line, in the receipt's
 * order. Anyone recomputes that hash from a receipt's `lineItems` with `proofLine` (ethers:
 * `TypedDataEncoder.from({ Line }).encodeData('Line[]', lines)`).
 */

/** The version of the document's domain; another set of types would be another version. */
export const RECEIPT_PROOF_VERSION = '1';

export interface TypedDataField {
  name: string;
  type: string;
}

/**
 * The types, without `EIP712Domain` (ethers derives it from the domain and refuses it here; viem
 * derives it too). Amounts are integers: USD in cents, the token in its atomic units.
 */
export const receiptProofTypes = {
  Receipt: [
    { name: 'receiptId', type: 'string' },
    { name: 'merchant', type: 'address' },
    { name: 'lines', type: 'Line[]' },
    { name: 'currency', type: 'string' },
    { name: 'totalCents', type: 'uint256' },
    { name: 'token', type: 'string' },
    { name: 'tokenAddress', type: 'address' },
    { name: 'amount', type: 'uint256' },
    { name: 'payer', type: 'address' },
    { name: 'payTo', type: 'address' },
    { name: 'chainId', type: 'uint256' },
    { name: 'transactionHash', type: 'bytes32' },
    { name: 'paidAt', type: 'uint256' },
  ],
  Line: [
    { name: 'label', type: 'string' },
    { name: 'sku', type: 'string' },
    { name: 'qty', type: 'uint256' },
    { name: 'unitPriceCents', type: 'uint256' },
    { name: 'priceCents', type: 'uint256' },
  ],
} as const satisfies Record<string, readonly TypedDataField[]>;

export interface ProofDomain {
  name: string;
  version: string;
  chainId: number;
}

/** One receipt line as signed: an absent sku is `""`, an absent quantity or unit price `0`. */
export interface ProofLine {
  label: string;
  sku: string;
  qty: number;
  unitPriceCents: number;
  priceCents: number;
}

/**
 * What is signed. Numbers stay JSON numbers while they are safe integers (cents, the chain id, the
 * time in ms); `amount`, which may pass 2^53 (wei), is always a decimal string.
 */
export interface ReceiptProofMessage {
  receiptId: string;
  /** The merchant's wallet (lower-case). */
  merchant: string;
  lines: ProofLine[];
  currency: 'USD';
  /** What the buyer paid for: the customer total (processing fee included), in cents. */
  totalCents: number;
  /** `USDC`, `USDT` or `ETH`. */
  token: string;
  /** The token's contract; the zero address for ETH. */
  tokenAddress: string;
  /** Atomic units of the token received for the receipt (the receipt's `amountPaid`). */
  amount: string;
  payer: string;
  /** Where the payment went: the receipt's deposit address (an x402 payment: the merchant's split). */
  payTo: string;
  chainId: number;
  /** The transaction that made the receipt paid. */
  transactionHash: string;
  /** When the service saw it paid: Unix time in milliseconds (the receipt's `paidAt`). */
  paidAt: number;
}

export interface ReceiptProofDocument {
  domain: ProofDomain;
  types: { Receipt: TypedDataField[]; Line: TypedDataField[] };
  primaryType: 'Receipt';
  message: ReceiptProofMessage;
}

/** The document with its signature (65 bytes, hex) and the signer's address (checksummed). */
export interface ReceiptProof extends ReceiptProofDocument {
  signature: string;
  signer: string;
}

/** Statuses of a receipt that was paid: the proof is of the payment, whatever happened after it (a refund). */
export const provableStatuses = ['paid', 'reconciled', 'refund_requested', 'refunded'] as const;

export const wasPaid = (receipt: { status: string }): boolean => (provableStatuses as readonly string[]).includes(receipt.status);

/** What a proof is made of: the stored receipt's fields (shared/domain/receipt.ts, which stores the proof). */
export interface ProvableReceipt {
  receiptId: string;
  wallet: string;
  status: string;
  lineItems: ReceiptLine[];
  customerTotalUsd: number;
  transactionHash: string | null;
  buyerWallet: string | null;
  token: string | null;
  amountPaid?: string | null;
  paidAt?: number | null;
  quotes?: Quote[];
}

/** The domain: the deployment's brand name, the document version, the deployment's chain. No verifying contract: none checks these on chain. */
export const proofDomain = (brandName: string, chainId: number): ProofDomain => ({ name: brandName, version: RECEIPT_PROOF_VERSION, chainId });

/** A receipt line as signed (and as a buyer recomputes it from the receipt's `lineItems`). */
export const proofLine = (line: ReceiptLine): ProofLine => ({
  label: line.label,
  sku: line.sku ?? '',
  qty: line.qty ?? 0,
  unitPriceCents: line.unitPriceUsd === undefined ? 0 : toCents(line.unitPriceUsd),
  priceCents: toCents(line.priceUsd),
});

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const HASH = /^0x[0-9a-fA-F]{64}$/;
const ATOMIC = /^\d{1,78}$/;

/**
 * The message of a paid receipt, from its stored payment facts; undefined when it has none to prove
 * (not paid, or paid without a transaction on chain). The token's contract, the split and the chain
 * are the newest quote's in the paid token (what the payment was checked against); the token's
 * contract falls back to the deployment's token of that symbol.
 */
export const proofMessageFor = (receipt: ProvableReceipt, deployment: { tokens: readonly PayToken[] }): ReceiptProofMessage | undefined => {
  if (!wasPaid(receipt)) return undefined;
  const { transactionHash, buyerWallet, token, amountPaid, paidAt } = receipt;
  if (!transactionHash || !HASH.test(transactionHash) || !buyerWallet || !ADDRESS.test(buyerWallet) || !token) return undefined;
  if (!amountPaid || !ATOMIC.test(amountPaid) || typeof paidAt !== 'number' || !Number.isSafeInteger(paidAt) || paidAt < 0) return undefined;
  const quote = [...(receipt.quotes ?? [])].filter((candidate) => candidate.token === token).sort((a, b) => b.createdAt - a.createdAt)[0];
  const payTo = quote?.payTo;
  if (!payTo || !ADDRESS.test(payTo)) return undefined;
  const tokenAddress = quote.tokenAddress ?? deployment.tokens.find((candidate) => candidate.symbol === token)?.address ?? (token === 'ETH' ? ZERO_ADDRESS : undefined);
  if (!tokenAddress || !ADDRESS.test(tokenAddress)) return undefined;
  return {
    receiptId: receipt.receiptId,
    merchant: receipt.wallet.toLowerCase(),
    lines: receipt.lineItems.map(proofLine),
    currency: 'USD',
    totalCents: toCents(receipt.customerTotalUsd),
    token,
    tokenAddress: tokenAddress.toLowerCase(),
    amount: amountPaid,
    payer: buyerWallet.toLowerCase(),
    payTo: payTo.toLowerCase(),
    chainId: quote.chainId,
    transactionHash: transactionHash.toLowerCase(),
    paidAt,
  };
};

/** The document to sign: the domain, fresh copies of the types, the message. */
export const receiptProofDocument = (domain: ProofDomain, message: ReceiptProofMessage): ReceiptProofDocument => ({
  domain,
  types: { Receipt: receiptProofTypes.Receipt.map((field) => ({ ...field })), Line: receiptProofTypes.Line.map((field) => ({ ...field })) },
  primaryType: 'Receipt',
  message,
});

const Field = z.object({ name: z.string(), type: z.string() });
const Address = z.string().describe('0x address');

export const ProofDomainView = z.object({ name: z.string(), version: z.string(), chainId: z.number().int() });

/** `GET /api/receipts/{id}/proof` and `GET /api/portal/{id}/proof`. */
export const ReceiptProofView = z.object({
  domain: ProofDomainView,
  types: z.object({ Receipt: z.array(Field), Line: z.array(Field) }).describe('EIP-712 types, without EIP712Domain'),
  primaryType: z.literal('Receipt'),
  message: z.object({
    receiptId: z.string(),
    merchant: Address,
    lines: z.array(z.object({ label: z.string(), sku: z.string(), qty: z.number().int(), unitPriceCents: z.number().int(), priceCents: z.number().int() })),
    currency: z.literal('USD'),
    totalCents: z.number().int(),
    token: z.string(),
    tokenAddress: Address.describe('the zero address for ETH'),
    amount: z.string().describe('atomic units of the token, a decimal string'),
    payer: Address,
    payTo: Address.describe("where the payment went: the receipt's deposit address (an agent's x402 payment: the merchant's split)"),
    chainId: z.number().int(),
    transactionHash: z.string(),
    paidAt: z.number().int().describe('Unix ms'),
  }),
  signature: z.string().describe('EIP-712 signature, 65 bytes hex'),
  signer: Address.describe('the receipt signer that signed it (GET /.well-known/receipt-signer)'),
});

/** `GET /.well-known/receipt-signer`. */
export const ReceiptSignerView = z.object({
  address: Address.describe('the address receipt proofs are signed by (checksummed)'),
  chainId: z.number().int(),
  domain: ProofDomainView,
  retired: z
    .array(
      z.object({
        address: Address.describe('a receipt-signing key rotated out (lower-case)'),
        retiredAt: z.number().int().describe('when it stopped signing (Unix ms): its proofs count for payments made before then'),
      }),
    )
    .describe('keys rotated out, newest first'),
});
