/**
 * What the buyer's portal sees and sends, defined once as schemas (route table, OpenAPI, the page's
 * script). The buyer view is an allow-list: no metadata, webhook target, keys or merchant internals.
 */
import { z } from 'zod';
import { payTokens, PayTokenSymbol, TxHash } from './payment';
import { receiptStatuses } from './receipt';
import { ReceiptLineView } from './receipt-views';

const Status = z.enum(receiptStatuses);

export const QuoteView = z.object({
  quoteId: z.string(),
  token: PayTokenSymbol,
  tokenAddress: z.string().nullable(),
  chainId: z.number().int(),
  payTo: z
    .string()
    .describe(
      "the receipt's own deposit address (lower-case): every payment of this receipt goes here, in any amount, from any wallet; it can only ever send on to the shop's split. The same address for every token and every quote of the receipt",
    ),
  amount: z.string().describe('exactly the amount due, in atomic units (6 decimals for USDC and USDT, 18 for ETH): the customer total for the stablecoins, its ETH at the locked price rounded up to the wei'),
  decimals: z.number().int(),
  /** The amount in whole tokens, for display. */
  display: z.string().describe('the amount in whole tokens, exact'),
  usd: z.number(),
  rate: z.number().describe('USD per whole token at the quote (1 for the stablecoins)'),
  expiresAt: z.number().int().describe('end of the lock (Unix ms): ETH is owed at the locked price until then; transfers after it still count (the stablecoins in full, ETH against the price then)'),
  uri: z.string().describe('EIP-681 payment request to the deposit address, with the exact amount'),
});
export type QuoteView = z.output<typeof QuoteView>;

/** Why a receipt cannot be paid now (null: it can). */
export const notPayableReasons = ['split_required', 'no_chain', 'paid', 'refunded', 'expired', 'not_payable'] as const;

export const PortalView = z.object({
  receiptId: z.string(),
  status: Status,
  shop: z.object({
    name: z.string(),
    logoUrl: z.string(),
    colors: z.object({ primary: z.string(), accent: z.string(), background: z.string() }),
  }),
  currency: z.literal('USD'),
  lineItems: z.array(ReceiptLineView),
  totalUsd: z.number(),
  customerTotalUsd: z.number(),
  taxRate: z.number().nullable(),
  jurisdictionCode: z.string().nullable(),
  createdAt: z.number().int(),
  /** When an unpaid receipt expires (Unix ms). */
  expiresAt: z.number().int(),
  payable: z.boolean(),
  notPayableReason: z.enum(notPayableReasons).nullable(),
  chainId: z.number().int().nullable(),
  tokens: z.array(z.object({ symbol: PayTokenSymbol, decimals: z.number().int() })),
  /** The token the shop's reserve wants next (GET /api/reserve/recommend), where it set reserveRatios: the page offers it first. */
  recommendedToken: PayTokenSymbol.nullable(),
  /** The newest quote still open, if any. */
  quote: QuoteView.nullable(),
  payment: z
    .object({
      transactionHash: z.string().nullable().describe('null for ETH credited from the deposit address’s balance (sent on by a contract, with no transaction of its own)'),
      buyerWallet: z.string().nullable(),
      token: z.string().nullable(),
      amount: z.string().nullable(),
      paidAt: z.number().int().nullable(),
      explorerUrl: z.string().nullable(),
    })
    .nullable(),
  /** What an underpayment left to pay, in the quoted token. */
  underpaid: z.object({ token: PayTokenSymbol, received: z.string(), expected: z.string() }).nullable(),
  failure: z.object({ code: z.string(), reason: z.string(), action: z.string() }).nullable(),
  /** Paying by card through an on-ramp provider (in USDC to the split), where one is configured and USDC is accepted. */
  card: z.object({ provider: z.string() }).nullable(),
});
export type PortalView = z.output<typeof PortalView>;

export const QuoteRequest = z.object({ token: z.enum(payTokens, { error: `must be one of ${payTokens.join(', ')}` }) });

export const PaymentSubmission = z.object({ txHash: TxHash });

/** What the page may report: tracking statuses (through the status service) and its last error, for the merchant. */
export const PortalEvent = z.object({
  status: z.enum(['link_opened', 'buyer_logged_in', 'checkout_initialized', 'checkout_success']).optional(),
  /** The connected wallet (with `buyer_logged_in`). */
  wallet: z
    .string()
    .regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x address')
    .transform((wallet) => wallet.toLowerCase())
    .optional(),
  /** The page's last attempt's error (a rejected signature, say): recorded, changes no status, sends no webhook. */
  error: z.object({ code: z.string().regex(/^PORTAL_[A-Z0-9_]{1,60}$/, 'must be a PORTAL_* code'), message: z.string().max(300).optional() }).optional(),
});

/** The outcome of a reported (or watched) transaction. */
export const PaymentAnswer = z.object({
  ok: z.literal(true),
  receiptId: z.string(),
  status: Status,
  outcome: z.enum(['paid', 'overpaid', 'underpaid', 'slippage', 'reverted', 'unconfirmed', 'pending', 'already_recorded']),
  /** With `already_recorded`: what the transaction was judged when it was recorded (by an earlier report, or the watcher). */
  recorded: z.enum(['paid', 'overpaid', 'underpaid', 'slippage', 'reverted']).optional(),
  transactionHash: z.string(),
  confirmations: z.number().int().optional(),
  required: z.number().int().optional(),
  received: z.string().optional(),
  expected: z.string().optional(),
});
export type PaymentAnswer = z.output<typeof PaymentAnswer>;

/** A card on-ramp session for the receipt: where to send the buyer, and the USDC quote it delivers. */
export const OnrampAnswer = z.object({
  ok: z.literal(true),
  provider: z.string(),
  sessionId: z.string(),
  url: z.string().describe("the provider's checkout page"),
  clientSecret: z.string().nullable().describe("for the provider's embedded widget, where it has one"),
  quote: QuoteView,
});
