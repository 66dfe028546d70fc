import type { ReceiptLine } from './pricing';

export const receiptStatuses = [
  'generated',
  'pending',
  'link_opened',
  'buyer_logged_in',
  'checkout_initialized',
  'checkout_success',
  'paid',
  'reconciled',
  'failed',
  'refund_requested',
  'refunded',
] as const;
export type ReceiptStatus = (typeof receiptStatuses)[number];

/** A receipt as stored: partitioned by the merchant's wallet; its id is claimed across all merchants. */
export interface Receipt {
  id: string;
  receiptId: string;
  wallet: string;
  brandKey: string;
  brandName: string;
  status: ReceiptStatus;
  currency: 'USD';
  lineItems: ReceiptLine[];
  totalUsd: number;
  jurisdictionCode: string | null;
  taxRate: number | null;
  /** How it was made: priced from inventory (`order`) or sent whole by the merchant (`api`). */
  source: 'order' | 'api';
  /** The subscription (API key) that created it: its key signs the receipt's webhooks. */
  createdBy: string | null;
  createdAt: number;
  updatedAt: number;
}

/** Long and random, so receipt URLs cannot be guessed: `R-` and 16 base32 characters (80 bits). */
export const newReceiptId = (random16: string) => `R-${random16.toUpperCase()}`;

export const receiptClaimId = (receiptId: string) => `receipt:${receiptId}`;

export const paymentUrlFor = (baseUrl: string, receiptId: string) => `${baseUrl}/pay/${encodeURIComponent(receiptId)}`;

/** The receipt on the wire: an allow-list of fields. */
export const toReceiptView = (receipt: Receipt, baseUrl: string) => ({
  receiptId: receipt.receiptId,
  status: receipt.status,
  currency: receipt.currency,
  lineItems: receipt.lineItems,
  totalUsd: receipt.totalUsd,
  jurisdictionCode: receipt.jurisdictionCode,
  taxRate: receipt.taxRate,
  brandName: receipt.brandName,
  createdAt: receipt.createdAt,
  paymentUrl: paymentUrlFor(baseUrl, receipt.receiptId),
});
