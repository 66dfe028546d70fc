/**
 * What agents send to the x402 routes and what they get back, and the price bounds the interface
 * document gives them (USDC atomic units, 6 decimals).
 */
import { z } from 'zod';
import { Slug } from './shop';
import { JurisdictionCode } from './tax-catalog';

export const X402_ORDER_BOUNDS = { min: 100_000n, max: 100_000_000_000n } as const;
export const X402_SUBSCRIPTION_BOUNDS = { min: 0n, max: 5_000_000_000n } as const;

export const X402OrderRequest = z.object({
  shopSlug: Slug,
  items: z.array(z.object({ sku: z.string().trim().min(1).max(64), qty: z.number().int().min(1).max(10_000) })).max(100),
  jurisdictionCode: JurisdictionCode.optional(),
});
export type X402OrderRequest = z.output<typeof X402OrderRequest>;

/** Plans an agent can buy, and their price in whole USD (starter: free, with a wallet sign-in). */
export const subscriptionPrices = { starter: 0, pro: 399, enterprise: 500 } as const;
export const SubscriptionPlan = z.enum(['starter', 'pro', 'enterprise']);
export type SubscriptionPlan = z.output<typeof SubscriptionPlan>;
export const X402SubscribeRequest = z.object({ planKey: SubscriptionPlan });

/** A paid plan's term; paying again before it ends extends it. */
export const SUBSCRIPTION_TERM_MS = 30 * 24 * 60 * 60 * 1000;

/** USDC atomic units of whole cents. */
export const usdcOfCents = (cents: number): bigint => BigInt(cents) * 10_000n;

/** One starter key per wallet: this claim names the wallet's. */
export const starterClaimId = (wallet: string) => `x402-starter:${wallet.toLowerCase()}`;

export const X402ReceiptAnswer = z.object({
  ok: z.literal(true),
  receipt: z.object({
    receiptId: z.string(),
    totalUsd: z.number(),
    lineItems: z.array(z.object({ label: z.string(), priceUsd: z.number(), qty: z.number().int().optional(), sku: z.string().optional(), unitPriceUsd: z.number().optional() })),
    status: z.literal('paid'),
    transactionHash: z.string(),
  }),
});

export const SubscriptionResult = z.object({
  ok: z.boolean(),
  plan: z.string(),
  priceUsd: z.number(),
  subscriptionId: z.string(),
  apiKey: z.string().optional().describe('the new key, shown once: absent when the same payment proof is sent again'),
  message: z.string(),
  expiresAt: z.number().int().nullable(),
});
