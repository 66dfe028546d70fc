/**
 * The settings page's worked example of a processing fee: what a buyer pays for an order, and what
 * reaches the merchant after the split's platform and partner shares, by the service's own pricing
 * rule (`totalWithFeesCents`), so the example is exactly what an order would be. Shared by the
 * server render and the page's script (which recomputes it as the fee is typed).
 */
import { divideHalfUp, totalWithFeesCents } from '../../shared/domain/customer-total';
import { esc, percentOfBps, usd, type Html } from './kit';

export interface FeeExampleInput {
  /** The items of the example order, in cents. */
  itemsCents: number;
  /** The tax rate applied (a fraction: 0.0725), or 0. */
  taxRate: number;
  processingFeePct: number;
  /** The split's platform and partner shares together, in basis points. */
  feeBps: number;
}

export interface FeeExample {
  itemsCents: number;
  taxCents: number;
  feeCents: number;
  totalCents: number;
  /** What the merchant's share of the split is, of the total. */
  merchantCents: number;
}

/** Null when the fee is not a valid one (outside 0–10 %, more than 2 decimals). */
export const feeExample = (input: FeeExampleInput): FeeExample | null => {
  const hundredths = Math.round(input.processingFeePct * 100);
  if (!Number.isFinite(input.processingFeePct) || input.processingFeePct < 0 || input.processingFeePct > 10 || hundredths / 100 !== input.processingFeePct) return null;
  // As orders are taxed: the rate in parts per million, the tax rounded half up once.
  const taxCents = Number(divideHalfUp(BigInt(input.itemsCents) * BigInt(Math.round(input.taxRate * 1_000_000)), 1_000_000n));
  const base = input.itemsCents + taxCents;
  const totalCents = totalWithFeesCents(base, hundredths, input.feeBps);
  return { itemsCents: input.itemsCents, taxCents, feeCents: totalCents - base, totalCents, merchantCents: totalCents - Math.round((totalCents * input.feeBps) / 10_000) };
};

/** A rate (fraction) as the percent a person types: 0.0725 → "7.25". */
export const percent = (rate: number) => String(Number((rate * 100).toFixed(4)));

export const EXAMPLE_ITEMS_CENTS = 10_000;

/** The worked example's rows, or a note when the fee typed is not a valid one. */
export const feeExampleTable = (input: { processingFeePct: number; feeBps: number; tax: { code: string; rate: number } | null }): Html => {
  const example = feeExample({ itemsCents: EXAMPLE_ITEMS_CENTS, taxRate: input.tax?.rate ?? 0, processingFeePct: input.processingFeePct, feeBps: input.feeBps });
  if (!example) return '<p>Enter a fee from 0 to 10 % with at most 2 decimals to see an example.</p>';
  const row = (label: string, cents: number, total = false) => `<tr${total ? ' class="total"' : ''}><th scope="row">${esc(label)}</th><td class="num">${esc(usd(cents / 100))}</td></tr>`;
  return `<table>
<caption class="visually-hidden">What a buyer pays for an order of ${esc(usd(example.itemsCents / 100))}</caption>
<tbody>
${row('Items', example.itemsCents)}
${row(input.tax ? `Tax (${percent(input.tax.rate)} % · ${input.tax.code})` : 'Tax (no default jurisdiction)', example.taxCents)}
${row('Processing Fee', example.feeCents)}
${row('The buyer pays', example.totalCents, true)}
${input.feeBps > 0 ? row(`You receive (the split keeps ${percentOfBps(input.feeBps)} for the platform)`, example.merchantCents) : ''}
</tbody>
</table>`;
};

