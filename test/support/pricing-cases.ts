/**
 * Order pricing cases with their expected cents, worked out independently of the service's code
 * (decimal arithmetic, half-up rounding of B × (1 + p/100) × 10000 / (10000 − F)).
 */
export interface PricingCase {
  name: string;
  items: Array<{ sku: string; name: string; priceUsd: number; qty: number; taxable: boolean }>;
  /** A tax catalog code with `rate`, or none. */
  jurisdictionCode?: string;
  rate: number;
  processingFeePct: number;
  platformFeeBps: number;
  partnerFeeBps: number;
  expected: { subtotal: number; tax: number; fee: number; total: number };
}

const item = (sku: string, priceUsd: number, qty: number, taxable = true) => ({ sku, name: `Item ${sku}`, priceUsd, qty, taxable });

export const pricingCases: PricingCase[] = [
  { name: 'no tax, no fees', items: [item('A', 10, 1)], rate: 0, processingFeePct: 0, platformFeeBps: 0, partnerFeeBps: 0, expected: { subtotal: 1000, tax: 0, fee: 0, total: 1000 } },
  { name: 'California tax rounds half up (72.5 → 73 cents)', items: [item('A', 10, 1)], jurisdictionCode: 'US-CA', rate: 0.0725, processingFeePct: 0, platformFeeBps: 0, partnerFeeBps: 0, expected: { subtotal: 1000, tax: 73, fee: 0, total: 1073 } },
  { name: 'tax, processing fee and platform share', items: [item('A', 10, 3)], jurisdictionCode: 'US-CA', rate: 0.0725, processingFeePct: 2.9, platformFeeBps: 100, partnerFeeBps: 0, expected: { subtotal: 3000, tax: 218, fee: 127, total: 3345 } },
  { name: 'untaxed item only', items: [item('GIFT', 25, 1, false)], jurisdictionCode: 'US-CA', rate: 0.0725, processingFeePct: 0, platformFeeBps: 100, partnerFeeBps: 0, expected: { subtotal: 2500, tax: 0, fee: 25, total: 2525 } },
  { name: 'taxable and untaxed lines', items: [item('A', 12.5, 2), item('GIFT', 25, 1, false)], jurisdictionCode: 'US-NY', rate: 0.04, processingFeePct: 0, platformFeeBps: 0, partnerFeeBps: 0, expected: { subtotal: 5000, tax: 100, fee: 0, total: 5100 } },
  { name: 'tax below half a cent rounds to 0', items: [item('A', 0.01, 1)], jurisdictionCode: 'US-CA', rate: 0.0725, processingFeePct: 0, platformFeeBps: 0, partnerFeeBps: 0, expected: { subtotal: 1, tax: 0, fee: 0, total: 1 } },
  { name: 'tax above half a cent rounds to 1', items: [item('A', 0.07, 1)], jurisdictionCode: 'US-CA', rate: 0.0725, processingFeePct: 0, platformFeeBps: 0, partnerFeeBps: 0, expected: { subtotal: 7, tax: 1, fee: 0, total: 8 } },
  { name: 'Ontario HST, platform share only', items: [item('A', 1.99, 7)], jurisdictionCode: 'CA-ON', rate: 0.13, processingFeePct: 0, platformFeeBps: 100, partnerFeeBps: 0, expected: { subtotal: 1393, tax: 181, fee: 16, total: 1590 } },
  { name: 'Germany VAT with a partner brand', items: [item('A', 99.99, 1)], jurisdictionCode: 'EU-DE', rate: 0.19, processingFeePct: 3.5, platformFeeBps: 100, partnerFeeBps: 50, expected: { subtotal: 9999, tax: 1900, fee: 604, total: 12503 } },
  { name: 'Quebec combined rate (six decimals)', items: [item('A', 19.95, 4)], jurisdictionCode: 'CA-QC', rate: 0.14975, processingFeePct: 0, platformFeeBps: 100, partnerFeeBps: 0, expected: { subtotal: 7980, tax: 1195, fee: 93, total: 9268 } },
  { name: 'Hungary VAT, highest processing fee', items: [item('A', 5.55, 3)], jurisdictionCode: 'EU-HU', rate: 0.27, processingFeePct: 10, platformFeeBps: 0, partnerFeeBps: 0, expected: { subtotal: 1665, tax: 450, fee: 212, total: 2327 } },
  { name: 'Minnesota, partner brand, fractional fee', items: [item('A', 33.33, 3)], jurisdictionCode: 'US-MN', rate: 0.06875, processingFeePct: 1.25, platformFeeBps: 150, partnerFeeBps: 100, expected: { subtotal: 9999, tax: 687, fee: 411, total: 11097 } },
  { name: 'free item', items: [item('A', 0, 2)], jurisdictionCode: 'US-CA', rate: 0.0725, processingFeePct: 2.9, platformFeeBps: 100, partnerFeeBps: 0, expected: { subtotal: 0, tax: 0, fee: 0, total: 0 } },
  { name: 'large order', items: [item('A', 9999.99, 100)], jurisdictionCode: 'US-TX', rate: 0.0625, processingFeePct: 2.5, platformFeeBps: 100, partnerFeeBps: 0, expected: { subtotal: 99999900, tax: 6249994, fee: 3756309, total: 110006203 } },
  { name: 'processing fee rounds half up (100.5 → 101)', items: [item('A', 1, 1, false)], rate: 0, processingFeePct: 0.5, platformFeeBps: 0, partnerFeeBps: 0, expected: { subtotal: 100, tax: 0, fee: 1, total: 101 } },
  { name: 'platform and partner shares only', items: [item('A', 10, 1, false)], rate: 0, processingFeePct: 0, platformFeeBps: 200, partnerFeeBps: 100, expected: { subtotal: 1000, tax: 0, fee: 31, total: 1031 } },
  { name: 'Missouri three-decimal rate, several lines', items: [item('A', 4.99, 3), item('B', 0.99, 11), item('C', 15, 1, false)], jurisdictionCode: 'US-MO', rate: 0.04225, processingFeePct: 1.9, platformFeeBps: 100, partnerFeeBps: 0, expected: { subtotal: 4086, tax: 109, fee: 123, total: 4318 } },
];
