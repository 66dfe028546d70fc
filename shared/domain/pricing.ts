import { z } from 'zod';
import { fromCents } from './money';
import { walletAddress } from './wallet';
import { divideHalfUp, totalWithFeesCents } from './customer-total';

/** What a brand charges: its shares of every payment, in basis points, and the partner's payout wallet. */
export interface PricingConfig {
  id: string;
  brandKey: string;
  platformFeeBps: number;
  partnerFeeBps: number;
  partnerWallet: string | null;
  updatedAt: number | null;
}

export const pricingId = (brandKey: string) => `pricing:${brandKey}`;

const bps = z.number().int('must be a whole number of basis points').min(0).max(10_000);

export const PricingUpdate = z
  .object({
    brandKey: z.string().regex(/^[a-z0-9-]{1,32}$/).optional(),
    platformFeeBps: bps.optional(),
    partnerFeeBps: bps.optional(),
    partnerWallet: walletAddress.nullable().optional(),
  })
  .strict();
export type PricingUpdate = z.output<typeof PricingUpdate>;

/** USD a month per plan (the agent subscription prices of the interface document). */
export const planPricesUsd = { starter: 0, pro: 399, enterprise: 500 } as const;

/** The total's arithmetic lives in a module without schemas, which pages' scripts import too. */
export { divideHalfUp, totalWithFeesCents };

export interface OrderLineInput {
  label: string;
  /** Absent for a line that is no inventory item (a point-of-sale amount). */
  sku?: string;
  qty: number;
  unitCents: number;
  taxable: boolean;
}

export interface ReceiptLine {
  label: string;
  priceUsd: number;
  qty?: number;
  sku?: string;
  unitPriceUsd?: number;
}

export interface PricedOrder {
  lineItems: ReceiptLine[];
  subtotalCents: number;
  taxCents: number;
  processingFeeCents: number;
  totalCents: number;
}

export const TAX_LABEL = 'Tax';
export const PROCESSING_FEE_LABEL = 'Processing Fee';

/**
 * Item lines, then Tax, then Processing Fee, all in integer cents, each rounded half up once and
 * later lines built on the rounded earlier ones.
 */
export const priceOrder = (input: {
  lines: OrderLineInput[];
  taxRatePpm: number;
  /** processingFeePct × 100 (2.9 % → 290). */
  processingFeeHundredths: number;
  /** platformFeeBps + partnerFeeBps of the merchant's deployed split. */
  feeBps: number;
}): PricedOrder => {
  const itemLines = input.lines.map((line) => ({ ...line, priceCents: line.unitCents * line.qty }));
  const subtotalCents = itemLines.reduce((sum, line) => sum + line.priceCents, 0);
  const taxableCents = itemLines.filter((line) => line.taxable).reduce((sum, line) => sum + line.priceCents, 0);
  const taxCents = Number(divideHalfUp(BigInt(taxableCents) * BigInt(input.taxRatePpm), 1_000_000n));
  const baseCents = subtotalCents + taxCents;
  const totalCents = totalWithFeesCents(baseCents, input.processingFeeHundredths, input.feeBps);
  return {
    lineItems: [
      ...itemLines.map((line) => ({
        label: line.label,
        ...(line.sku !== undefined && { sku: line.sku }),
        qty: line.qty,
        unitPriceUsd: fromCents(line.unitCents),
        priceUsd: fromCents(line.priceCents),
      })),
      { label: TAX_LABEL, priceUsd: fromCents(taxCents) },
      { label: PROCESSING_FEE_LABEL, priceUsd: fromCents(totalCents - baseCents) },
    ],
    subtotalCents,
    taxCents,
    processingFeeCents: totalCents - baseCents,
    totalCents,
  };
};
