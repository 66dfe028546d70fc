import { DomainError } from '../../domain/errors';
import { toCents } from '../../domain/money';
import { paymentUrlFor } from '../../domain/receipt';
import { toReceiptView } from '../../domain/receipt-views';
import type { AppDeps } from '../deps';
import { loadMerchant } from '../merchants';
import { storePricedReceipt } from '../orders';

type TerminalDeps = Pick<AppDeps, 'merchants' | 'receipts' | 'claims' | 'clock' | 'ids' | 'settings'>;

/** What the point of sale sends (validated by the route): an amount, and optionally its label and jurisdiction. */
export interface TerminalSale {
  amountUsd: number;
  label?: string;
  jurisdictionCode?: string;
}

export const TERMINAL_LINE_LABEL = 'Sale';

/** The QR code of a receipt's payment link (the portal draws it). */
export const qrUrlFor = (baseUrl: string, receiptId: string) => `${baseUrl}/api/portal/${encodeURIComponent(receiptId)}/qr.svg`;

/**
 * Point of sale: one amount becomes a `generated` receipt priced exactly as an order is (the amount
 * as one taxable line, then Tax and Processing Fee), with its payment link and the link's QR code
 * for the buyer's phone. 403 `split_required` without a deployed split.
 */
export const createTerminalReceipt = async (deps: TerminalDeps, caller: { wallet: string; subscriptionId: string | null }, sale: TerminalSale) => {
  const merchant = await loadMerchant(deps, caller.wallet);
  const split = merchant.split;
  if (!split) throw new DomainError('split_required', 'deploy a split contract before taking payments');
  const cents = toCents(sale.amountUsd);
  const receipt = await storePricedReceipt(deps, caller, merchant, split, {
    lines: [{ label: sale.label ?? TERMINAL_LINE_LABEL, qty: 1, unitCents: cents, taxable: true }],
    jurisdictionCode: sale.jurisdictionCode,
    source: 'terminal',
  });
  const { baseUrl } = deps.settings;
  return {
    ok: true as const,
    receipt: toReceiptView(receipt, baseUrl),
    paymentUrl: paymentUrlFor(baseUrl, receipt.receiptId),
    qrUrl: qrUrlFor(baseUrl, receipt.receiptId),
  };
};

/**
 * The console's point of sale: a session holds no key, so no key created the receipt, and the shop's
 * webhook signing secret signs its webhooks (as for agents' receipts), never one of its API keys.
 */
export const createConsoleTerminalReceipt = (deps: TerminalDeps, wallet: string, sale: TerminalSale) => createTerminalReceipt(deps, { wallet, subscriptionId: null }, sale);
