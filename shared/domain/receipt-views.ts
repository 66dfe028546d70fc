import { z } from 'zod';
import { failureCategories } from './failures';
import { isBalanceCredit, PayTokenSymbol, type PaymentRecord, type PayToken } from './payment';
import { paymentUrlFor, receiptStatuses, type Receipt } from './receipt';
import { WEBHOOK_EVENT } from './webhook';

/**
 * The receipt as the outside world sees it, defined once: each view is a schema (which the route
 * table, the OpenAPI document and the webhook documentation use) and a mapping typed by that schema,
 * so a field added to one and not the other does not compile. Views are allow-lists: nothing else of
 * the stored receipt (signing key, pending events, request hash) ever leaves.
 */
const Status = z.enum(receiptStatuses);

export const ReceiptLineView = z.object({
  label: z.string(),
  priceUsd: z.number(),
  qty: z.number().int().optional(),
  sku: z.string().optional(),
  unitPriceUsd: z.number().optional(),
});

export const RefundView = z.object({
  refundId: z.string(),
  requestedAt: z.number().int(),
  amountUsd: z.number(),
  token: z.string(),
  tokenAddress: z.string().nullable(),
  amount: z.string().describe('atomic units to send'),
  from: z.string(),
  to: z.string(),
  uri: z.string().describe('EIP-681 request the merchant wallet can pay'),
  reason: z.string().nullable(),
  txHash: z.string().nullable(),
  refundedAt: z.number().int().nullable(),
});

/** How the service judged a transaction: `satisfies` keeps out a name records lack, `toPaymentView` fails to compile on one they gain. */
const paymentOutcomes = ['paid', 'overpaid', 'underpaid', 'slippage', 'reverted'] as const satisfies readonly PaymentRecord['outcome'][];

/** One transaction the service judged for the receipt, as it recorded it: its hash, sender, token, amount, block and outcome. */
export const PaymentView = z.object({
  transactionHash: z.string().nullable().describe('null for ETH credited from the deposit address’s balance: no transaction of its own sent it there'),
  judgedBy: z.enum(['transaction', 'balance']).describe('`transaction`: a transaction on chain, found by its hash or its logs; `balance`: ETH the deposit address received that no transaction to it explains (a contract wallet sent it on), credited from its balance at `blockNumber`'),
  payer: z.string().nullable().describe('the address the token came from; for a reverted transaction, its sender; null for ETH credited from the deposit address’s balance (a contract wallet’s internal transfer names no sender)'),
  token: PayTokenSymbol.nullable().describe('null: the transaction reverted and moved nothing'),
  amount: z.string().describe('atomic units of `token` this transaction brought to the receipt\'s deposit address (an x402 settlement: to the split), decimal string ("0" when it reverted)'),
  decimals: z.number().int().nullable().describe('the decimals of `token`: `amount` / 10^decimals whole tokens; null with `token`'),
  expected: z.string().nullable().describe('atomic units the receipt needed in all when this transaction was judged (earlier underpayments count toward it); null when it reverted'),
  blockNumber: z.number().int(),
  outcome: z.enum(paymentOutcomes).describe('`underpaid`: short of `expected`, the receipt stays unpaid; `slippage`: a late ETH payment short beyond the tolerance; `reverted`: failed on chain'),
  recordedAt: z.number().int().describe('Unix ms: when the service judged it'),
});
export type PaymentView = z.output<typeof PaymentView>;

export const ReceiptView = z.object({
  receiptId: z.string(),
  status: Status,
  currency: z.literal('USD'),
  lineItems: z.array(ReceiptLineView),
  totalUsd: z.number(),
  customerTotalUsd: z.number(),
  jurisdictionCode: z.string().nullable(),
  taxRate: z.number().nullable(),
  brandName: z.string(),
  createdAt: z.number().int(),
  updatedAt: z.number().int(),
  paymentUrl: z.string(),
  transactionId: z.string().nullable(),
  metadata: z.record(z.string(), z.unknown()).nullable(),
  transactionHash: z.string().nullable(),
  buyerWallet: z.string().nullable(),
  token: z.string().nullable(),
  amountPaid: z.string().nullable().describe("atomic units of `token`"),
  amountOverpaid: z.string().nullable(),
  paidAt: z.number().int().nullable(),
  refunds: z.array(RefundView),
  refundedUsd: z.number(),
  stockShortfall: z.array(z.object({ sku: z.string(), missing: z.number().int() })),
  reconciledTxHash: z.string().nullable(),
  lastBuyerError: z.object({ code: z.string(), message: z.string().nullable(), at: z.number().int() }).nullable(),
  /** The card on-ramp session, as the webhooks carry it. */
  onrampSessionId: z.string().nullable(),
  isOnrampSessionUnique: z.boolean(),
  onrampSourceAmountUsd: z.number().nullable(),
});
export type ReceiptView = z.output<typeof ReceiptView>;

/**
 * One receipt (`GET /api/receipts/{id}`, the console's receipt): the view with every transaction
 * judged for it, oldest first, and its deposit address. Lists and the answers that make a receipt
 * carry `ReceiptView` alone: anyone may send the receipt's address a transfer of a quoted token, so a
 * receipt's records are not bounded, and a page of 200 receipts must not grow with them.
 */
export const ReceiptDetailView = ReceiptView.extend({
  depositAddress: z
    .string()
    .nullable()
    .describe("the receipt's own address, where its quotes ask to be paid (fixed at its first quote); null before one, and for a receipt paid to the split (an x402 order)"),
  payments: z.array(PaymentView).describe("every transaction judged for the receipt, oldest first; the receipt's own `transactionHash` names the one that paid it"),
});
export type ReceiptDetailView = z.output<typeof ReceiptDetailView>;

/** Set for a failed receipt, null otherwise. */
export const FailureFields = z.object({
  failureCode: z.string().nullable(),
  failureCategory: z.enum(failureCategories).nullable(),
  failureReason: z.string().nullable(),
  failureAction: z.string().nullable(),
  providerErrorCode: z.string().nullable(),
  providerRequestId: z.string().nullable(),
});
export type FailureFields = z.output<typeof FailureFields>;

export const StatusView = z.object({
  receiptId: z.string(),
  status: Status,
  previousStatus: Status.nullable(),
  updatedAt: z.number().int(),
  transactionHash: z.string().nullable(),
  ...FailureFields.shape,
});
export type StatusView = z.output<typeof StatusView>;

/** Every body field of `receipt.status_updated`, in the interface document's order; null where unknown. */
export const WebhookBody = z.object({
  event: z.literal(WEBHOOK_EVENT),
  receiptId: z.string(),
  status: Status,
  previousStatus: Status.nullable(),
  ...FailureFields.shape,
  transactionHash: z.string().nullable(),
  buyerWallet: z.string().nullable(),
  merchantWallet: z.string(),
  totalUsd: z.number(),
  customerTotalUsd: z.number(),
  onrampSourceAmountUsd: z.number().nullable(),
  onrampSessionId: z.string().nullable(),
  isOnrampSessionUnique: z.boolean(),
  token: z.string().nullable(),
  amountPaid: z.string().nullable(),
  paidAt: z.number().int().nullable(),
  transactionId: z.string().nullable(),
  metadata: z.record(z.string(), z.unknown()).nullable(),
  brandKey: z.string(),
  timestamp: z.number().int(),
});
export type WebhookBody = z.output<typeof WebhookBody>;

export const toReceiptView = (receipt: Receipt, baseUrl: string): ReceiptView => ({
  receiptId: receipt.receiptId,
  status: receipt.status,
  currency: receipt.currency,
  lineItems: receipt.lineItems,
  totalUsd: receipt.totalUsd,
  customerTotalUsd: receipt.customerTotalUsd,
  jurisdictionCode: receipt.jurisdictionCode,
  taxRate: receipt.taxRate,
  brandName: receipt.brandName,
  createdAt: receipt.createdAt,
  updatedAt: receipt.updatedAt,
  paymentUrl: paymentUrlFor(baseUrl, receipt.receiptId),
  transactionId: receipt.transactionId,
  metadata: receipt.metadata,
  transactionHash: receipt.transactionHash,
  buyerWallet: receipt.buyerWallet,
  token: receipt.token,
  amountPaid: receipt.amountPaid ?? null,
  amountOverpaid: receipt.amountOverpaid ?? null,
  paidAt: receipt.paidAt ?? null,
  refunds: receipt.refunds ?? [],
  refundedUsd: refundedUsd(receipt),
  stockShortfall: receipt.stock?.shortfall ?? [],
  reconciledTxHash: receipt.reconciledTxHash ?? null,
  lastBuyerError: receipt.lastBuyerError ?? null,
  onrampSessionId: receipt.onrampSessionId,
  isOnrampSessionUnique: receipt.isOnrampSessionUnique,
  onrampSourceAmountUsd: receipt.onrampSourceAmountUsd,
});

/** The token's decimals: the deployment's, or, for a token it no longer accepts, those the receipt was quoted in. */
const decimalsOf = (receipt: Receipt, tokens: readonly PayToken[], symbol: PaymentRecord['token']): number | null => {
  if (symbol === null) return null;
  return tokens.find((token) => token.symbol === symbol)?.decimals ?? (receipt.quotes ?? []).findLast((quote) => quote.token === symbol)?.decimals ?? null;
};

export const toPaymentView = (receipt: Receipt, tokens: readonly PayToken[], record: PaymentRecord): PaymentView => ({
  transactionHash: isBalanceCredit(record.txHash) ? null : record.txHash,
  judgedBy: isBalanceCredit(record.txHash) ? 'balance' : 'transaction',
  payer: record.payer,
  token: record.token,
  amount: record.amount,
  decimals: decimalsOf(receipt, tokens, record.token),
  expected: record.expected,
  blockNumber: record.blockNumber,
  outcome: record.outcome,
  recordedAt: record.at,
});

export const toReceiptDetailView = (receipt: Receipt, baseUrl: string, tokens: readonly PayToken[]): ReceiptDetailView => ({
  ...toReceiptView(receipt, baseUrl),
  depositAddress: receipt.deposit?.address ?? null,
  payments: (receipt.payments ?? []).map((record) => toPaymentView(receipt, tokens, record)),
});

/** What the merchant has refunded (verified on chain), in USD. */
export const refundedUsd = (receipt: Receipt): number =>
  (receipt.refunds ?? []).reduce((cents, refund) => cents + (refund.refundedAt !== null ? Math.round(refund.amountUsd * 100) : 0), 0) / 100;

export const failureFields = (receipt: Receipt): FailureFields => {
  const failure = receipt.status === 'failed' ? receipt.failure : null;
  return {
    failureCode: failure?.failureCode ?? null,
    failureCategory: failure?.failureCategory ?? null,
    failureReason: failure?.failureReason ?? null,
    failureAction: failure?.failureAction ?? null,
    providerErrorCode: failure?.providerErrorCode ?? null,
    providerRequestId: failure?.providerRequestId ?? null,
  };
};

export const toStatusView = (receipt: Receipt): StatusView => ({
  receiptId: receipt.receiptId,
  status: receipt.status,
  previousStatus: receipt.previousStatus,
  updatedAt: receipt.updatedAt,
  transactionHash: receipt.transactionHash,
  ...failureFields(receipt),
});

export const toWebhookBody = (receipt: Receipt, timestamp: number): WebhookBody => ({
  event: WEBHOOK_EVENT,
  receiptId: receipt.receiptId,
  status: receipt.status,
  previousStatus: receipt.previousStatus,
  ...failureFields(receipt),
  transactionHash: receipt.transactionHash,
  buyerWallet: receipt.buyerWallet,
  merchantWallet: receipt.wallet,
  totalUsd: receipt.totalUsd,
  customerTotalUsd: receipt.customerTotalUsd,
  onrampSourceAmountUsd: receipt.onrampSourceAmountUsd,
  onrampSessionId: receipt.onrampSessionId,
  isOnrampSessionUnique: receipt.isOnrampSessionUnique,
  token: receipt.token,
  amountPaid: receipt.amountPaid ?? null,
  paidAt: receipt.paidAt ?? null,
  transactionId: receipt.transactionId,
  metadata: receipt.metadata,
  brandKey: receipt.brandKey,
  timestamp,
});
