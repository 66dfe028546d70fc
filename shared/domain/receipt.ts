import type { FailureCategory } from './failures';
import type { PaymentRecord, PayTokenSymbol, Quote } from './payment';
import type { ReceiptLine } from './pricing';
import type { ReceiptProof } from './receipt-proof';

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

/** Who asks for a status change: the merchant's backend (API key), the buyer's portal, or the service itself. */
export type StatusActor = 'merchant' | 'portal' | 'service';

export interface ReceiptFailure {
  failureCode: string;
  failureCategory: FailureCategory;
  failureReason: string;
  failureAction: string;
  providerErrorCode: string | null;
  providerRequestId: string | null;
}

export interface StatusChange {
  status: ReceiptStatus;
  previousStatus: ReceiptStatus;
  at: number;
  by: StatusActor;
  failureCode: string | null;
}

/** A `receipt.status_updated` event waiting to be queued: written with the change, removed once queued. */
export interface WebhookEvent {
  eventId: string;
  receiptId: string;
  wallet: string;
  target: string;
  /** The exact bytes every attempt sends (and signs). */
  body: string;
  /** The subscription whose API key signs the event. */
  signingSubscriptionId: string | null;
  createdAt: number;
}

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
  /** How it was made: priced from inventory (`order`), priced from one amount at the point of sale (`terminal`) or sent whole by the merchant (`api`). */
  source: 'order' | 'terminal' | 'api';
  /** The subscription (API key) that created it: its key signs the receipt's webhooks. */
  createdBy: string | null;
  createdAt: number;
  updatedAt: number;
  previousStatus: ReceiptStatus | null;
  statusHistory: StatusChange[];
  pendingEvents: WebhookEvent[];
  failure: ReceiptFailure | null;
  webhookUrl: string | null;
  redirectUrl: string | null;
  transactionId: string | null;
  metadata: Record<string, unknown> | null;
  /** What the buyer pays, processing fee included (the server computes every payable amount). */
  customerTotalUsd: number;
  transactionHash: string | null;
  buyerWallet: string | null;
  token: string | null;
  onrampSessionId: string | null;
  onrampSourceAmountUsd: number | null;
  isOnrampSessionUnique: boolean;
  /** SHA-256 of the creation request (POST /api/receipts): a re-send with the same body is idempotent. */
  requestHash: string | null;
  // Payment facts. Optional: receipts stored before payments existed lack them (read as empty).
  /** The quotes given to the buyer, oldest first (a few: one per token while its lock runs). */
  quotes?: Quote[];
  /** Every transaction looked at for this receipt, whatever was decided. */
  payments?: PaymentRecord[];
  /**
   * The receipt's own deposit address (fixed at its first quote, with the split it sweeps to): every
   * payment of the receipt goes there, so where a transfer went says which receipt it pays.
   */
  deposit?: { address: string; split: string };
  /** The wallet the payment page connected last (its `buyer_logged_in`): only its reverted transaction, reported by the page, fails the receipt. */
  connectedWallet?: string;
  /** What paid it, in `token`'s atomic units. */
  amountPaid?: string | null;
  /** Atomic units above the quote (kept for the merchant; refundable). */
  amountOverpaid?: string | null;
  paidAt?: number | null;
  /** Stock taken for the receipt's lines when it was paid; `shortfall` what was missing (the money was already in). */
  stock?: { committedAt: number; shortfall: Array<{ sku: string; missing: number }> } | null;
  refunds?: Refund[];
  /** The split distribution that paid the receipt out. */
  reconciledTxHash?: string | null;
  /** The signed proof of the payment (EIP-712), written with `paid`; a receipt paid before proofs existed gets it on first request. */
  proof?: ReceiptProof | null;
  /** The card on-ramp session the buyer opened last, if any. */
  onramp?: OnrampRecord | null;
  /** The portal's last failed attempt (a rejected signature, say): for the merchant; it changes no status. */
  lastBuyerError?: { code: string; message: string | null; at: number } | null;
}

/**
 * A card on-ramp session opened for a receipt: the provider delivers the USDC of one quote to the
 * split (the chain then decides `paid`); its webhooks move the tracking statuses or fail the receipt.
 */
export interface OnrampRecord {
  provider: string;
  sessionId: string;
  /** The USDC quote the session delivers. */
  quoteId: string;
  /** The provider's page the buyer was sent to. */
  redirectTo: string;
  createdAt: number;
  /**
   * Where the session is, from the provider's events: forward only, `delivered` and `rejected` final.
   * A session is replaced only once rejected; while it is paid for, no second one opens.
   */
  state: 'created' | 'open' | 'processing' | 'delivered' | 'rejected';
  /** Ids of the provider events applied to the receipt, newest last (a replayed event is ignored). */
  appliedEvents: string[];
}

/** A refund the merchant sends from its own wallet to the payer; verified on chain like a payment. */
export interface Refund {
  refundId: string;
  requestedAt: number;
  amountUsd: number;
  token: PayTokenSymbol;
  /** The token contract, lower-case; null for ETH. */
  tokenAddress: string | null;
  /** Atomic units to send. */
  amount: string;
  from: string;
  to: string;
  uri: string;
  reason: string | null;
  txHash: string | null;
  refundedAt: number | null;
}

type ReceiptCore = Pick<Receipt, 'receiptId' | 'wallet' | 'brandKey' | 'brandName' | 'status' | 'lineItems' | 'totalUsd' | 'customerTotalUsd' | 'jurisdictionCode' | 'taxRate' | 'source' | 'createdBy'>;

/** A new receipt with every optional field at its "unknown" value. */
export const newReceipt = (core: ReceiptCore, now: number, extra: Partial<Receipt> = {}): Receipt => ({
  id: core.receiptId,
  currency: 'USD',
  createdAt: now,
  updatedAt: now,
  previousStatus: null,
  statusHistory: [],
  pendingEvents: [],
  failure: null,
  webhookUrl: null,
  redirectUrl: null,
  transactionId: null,
  metadata: null,
  transactionHash: null,
  buyerWallet: null,
  token: null,
  onrampSessionId: null,
  onrampSourceAmountUsd: null,
  isOnrampSessionUnique: false,
  requestHash: null,
  ...core,
  ...extra,
});

/** Long and random, so receipt URLs cannot be guessed: `R-` and 16 base32 characters (80 bits). */
export const newReceiptId = (random16: string) => `R-${random16.toUpperCase()}`;

export const receiptClaimId = (receiptId: string) => `receipt:${receiptId}`;

/**
 * A receipt that expired unpaid: failed with PORTAL_SESSION_EXPIRED once its expiry time has passed.
 * The same code from a card provider's session, or a merchant's, before then leaves it payable.
 */
export const hasExpired = (receipt: Pick<Receipt, 'status' | 'failure' | 'createdAt'>, expiryMs: number, now: number) =>
  receipt.status === 'failed' && receipt.failure?.failureCode === 'PORTAL_SESSION_EXPIRED' && receipt.createdAt + expiryMs <= now;

export const paymentUrlFor = (baseUrl: string, receiptId: string) => `${baseUrl}/pay/${encodeURIComponent(receiptId)}`;
