import { describe, expect, it } from 'vitest';
import { toCents } from '../../shared/domain/money';
import { divideHalfUp, priceOrder } from '../../shared/domain/pricing';
import { findJurisdiction, rateToPpm } from '../../shared/domain/tax-catalog';
import { pricingCases } from '../support/pricing-cases';

describe('order pricing', () => {
  it.each(pricingCases)('$name', (testCase) => {
    if (testCase.jurisdictionCode) expect(findJurisdiction(testCase.jurisdictionCode)?.rate).toBe(testCase.rate);
    const priced = priceOrder({
      lines: testCase.items.map((item) => ({ label: item.name, sku: item.sku, qty: item.qty, unitCents: toCents(item.priceUsd), taxable: item.taxable })),
      taxRatePpm: rateToPpm(testCase.rate),
      processingFeeHundredths: toCents(testCase.processingFeePct),
      feeBps: testCase.platformFeeBps + testCase.partnerFeeBps,
    });
    const { subtotal, tax, fee, total } = testCase.expected;
    expect({ subtotal: priced.subtotalCents, tax: priced.taxCents, fee: priced.processingFeeCents, total: priced.totalCents }).toEqual({ subtotal, tax, fee, total });
    const labels = priced.lineItems.map((line) => line.label);
    expect(labels.slice(-2)).toEqual(['Tax', 'Processing Fee']);
    const sumCents = priced.lineItems.reduce((sum, line) => sum + toCents(line.priceUsd), 0);
    expect(sumCents).toBe(total);
  });

  it('rounds half up in integer arithmetic', () => {
    expect([divideHalfUp(5n, 10n), divideHalfUp(4n, 10n), divideHalfUp(15n, 10n), divideHalfUp(0n, 7n)]).toEqual([1n, 0n, 2n, 0n]);
  });

  it('lets the merchant net exactly B × (1 + p/100) to the cent after the split pays F', () => {
    for (const testCase of pricingCases) {
      const base = testCase.expected.subtotal + testCase.expected.tax;
      const fees = testCase.platformFeeBps + testCase.partnerFeeBps;
      const merchantShare = (testCase.expected.total * (10_000 - fees)) / 10_000;
      expect(Math.abs(merchantShare - base * (1 + testCase.processingFeePct / 100))).toBeLessThanOrEqual(0.5 + 1e-9);
    }
  });
});
