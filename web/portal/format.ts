/**
 * How the portal words and formats what it shows, shared by the server render and the page's script
 * so that an amount, a status or a link reads the same before and after the script takes over.
 * Pure, no DOM and no zod: the script's bundle stays small.
 */
import type { ReceiptStatus } from '../../shared/domain/receipt';
import { formatUnits } from '../../shared/domain/units';

const usd = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' });

/** "$1,234.50". */
export const formatUsd = (amount: number): string => usd.format(amount);

/** What is left to pay after an underpayment, in whole tokens ("0" when nothing is). */
export const remainingUnits = (received: string, expected: string, decimals: number): string => {
  const left = BigInt(expected) - BigInt(received);
  return formatUnits(left > 0n ? left : 0n, decimals);
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
