/**
 * How the console names a receipt's status and colours its badge: one table for the server's pages
 * and the script that updates a badge live. Pure, no DOM.
 */
import type { PaymentRecord } from '../../shared/domain/payment';
import type { ReceiptStatus } from '../../shared/domain/receipt';

export type BadgeTone = 'neutral' | 'success' | 'warning' | 'danger';

const labels: Record<ReceiptStatus, { label: string; tone: BadgeTone }> = {
  generated: { label: 'Created', tone: 'neutral' },
  pending: { label: 'Pending', tone: 'neutral' },
  link_opened: { label: 'Link opened', tone: 'neutral' },
  buyer_logged_in: { label: 'Buyer signed in', tone: 'neutral' },
  checkout_initialized: { label: 'Checking out', tone: 'warning' },
  checkout_success: { label: 'Payment sent', tone: 'warning' },
  paid: { label: 'Paid', tone: 'success' },
  reconciled: { label: 'Paid out', tone: 'success' },
  failed: { label: 'Failed', tone: 'danger' },
  refund_requested: { label: 'Refund requested', tone: 'warning' },
  refunded: { label: 'Refunded', tone: 'neutral' },
};

export const statusLabel = (status: string): string => labels[status as ReceiptStatus]?.label ?? status;

const badgeClass = (tone: BadgeTone): string => (tone === 'neutral' ? 'badge' : `badge badge-${tone}`);

/** The badge's class list for a status. */
export const statusBadgeClass = (status: string): string => badgeClass(labels[status as ReceiptStatus]?.tone ?? 'neutral');

/** Statuses a payment has reached (the terminal's "paid" screen). */
export const isPaidStatus = (status: string): boolean => status === 'paid' || status === 'reconciled';

const paymentOutcomes: Record<PaymentRecord['outcome'], { label: string; tone: BadgeTone }> = {
  paid: { label: 'Paid', tone: 'success' },
  overpaid: { label: 'Overpaid', tone: 'success' },
  underpaid: { label: 'Underpaid', tone: 'warning' },
  slippage: { label: 'Short after a price move', tone: 'danger' },
  reverted: { label: 'Reverted', tone: 'danger' },
};

/** A payment's outcome as the receipt's payments table names it, and its badge's class list. */
export const paymentOutcomeLabel = (outcome: PaymentRecord['outcome']): string => paymentOutcomes[outcome].label;
export const paymentOutcomeClass = (outcome: PaymentRecord['outcome']): string => badgeClass(paymentOutcomes[outcome].tone);
