/**
 * How the portal words and formats what it shows, shared by the server render and the page's script
 * so that an amount, a status or a link reads the same before and after the script takes over.
 * Pure, no DOM and no zod: the script's bundle stays small.
 */
import type { QuoteView } from '../../shared/domain/portal-views';
import type { ReceiptStatus } from '../../shared/domain/receipt';
import { formatUnits } from '../../shared/domain/units';

const usd = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' });

/** "$1,234.50". */
export const formatUsd = (amount: number): string => usd.format(amount);

/** The most decimals the page shows of a token amount: a stablecoin's every unit, and a millionth of an ETH is a fraction of a cent. */
export const SHOWN_DECIMALS = 6;

/**
 * A token amount (atomic units) as the page shows it, in whole tokens with at most 6 decimals and no
 * trailing zeros ("0.003334 ETH"; a 6-decimal stablecoin's amount is exact). Rounded up, not half-up:
 * a "you pay" figure must never be less than owed, so that sending what the page says never leaves
 * the receipt short (it overstates by less than a millionth of a token); and one rule for every
 * amount means the success screen says the same figure the buyer was asked for. The exact amount
 * stays in the QR code, the wallet call and the API's `display`.
 */
export const shownUnits = (amount: string | bigint, decimals: number): string => {
  const value = BigInt(amount);
  if (decimals <= SHOWN_DECIMALS) return formatUnits(value, decimals);
  const step = 10n ** BigInt(decimals - SHOWN_DECIMALS);
  // BigInt division truncates toward zero: a positive rest needs one step more to round up.
  return formatUnits(value / step + (value % step > 0n ? 1n : 0n), SHOWN_DECIMALS);
};

/** A quote's amount with its token, as the page shows it ("0.003334 ETH"). */
export const shownQuote = (quote: Pick<QuoteView, 'amount' | 'decimals' | 'token'>): string => `${shownUnits(quote.amount, quote.decimals)} ${quote.token}`;

/** What is left to pay after an underpayment, in whole tokens as the page shows amounts ("0" when nothing is). */
export const remainingUnits = (received: string, expected: string, decimals: number): string => {
  const left = BigInt(expected) - BigInt(received);
  return shownUnits(left > 0n ? left : 0n, decimals);
};

export { transactionUrl } from '../../shared/domain/units';

/** "0x1234…cdef": enough of a hash or an address to recognise it. */
export const shortHex = (hex: string): string => (hex.length > 14 ? `${hex.slice(0, 6)}…${hex.slice(-4)}` : hex);

/** "9:05" for the time a quote is still held; "0:00" once it is over. */
export const formatCountdown = (ms: number): string => {
  const seconds = Math.max(0, Math.ceil(ms / 1000));
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, '0')}`;
};

/** A date and time in UTC, as the server renders it before the script shows local time. */
export const formatUtc = (ms: number): string => `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;

/** The buyer's words for each status (the merchant's API uses the codes). */
export const statusLabels: Record<ReceiptStatus, string> = {
  generated: 'Awaiting payment',
  pending: 'Awaiting payment',
  link_opened: 'Awaiting payment',
  buyer_logged_in: 'Wallet connected',
  checkout_initialized: 'Payment started',
  checkout_success: 'Confirming payment',
  paid: 'Paid',
  reconciled: 'Paid',
  failed: 'Payment failed',
  refund_requested: 'Refund in progress',
  refunded: 'Refunded',
};

/** The badge while part of a payment has arrived (the receipt's status does not change for it). */
export const PARTLY_PAID = 'Partly paid';

/** Statuses after which there is nothing left for the buyer to do. */
export const isSettled = (status: ReceiptStatus): boolean => status === 'paid' || status === 'reconciled';
