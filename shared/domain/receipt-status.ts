import { toCents } from './money';
import type { Receipt, ReceiptStatus, StatusActor } from './receipt';
import { refundedUsd } from './receipt-views';

/** Tracking statuses in their forward order; a receipt moves forward only (skips allowed). */
const trackingOrder: ReceiptStatus[] = ['link_opened', 'buyer_logged_in', 'checkout_initialized', 'checkout_success'];
const initial: ReceiptStatus[] = ['generated', 'pending'];
const prePaid: ReceiptStatus[] = [...initial, ...trackingOrder];

/** Statuses only the service sets (payment seen on chain, split executed, refund verified). */
const serviceOnly: ReceiptStatus[] = ['paid', 'reconciled', 'refund_requested', 'refunded'];

export type StatusDecision = { apply: true } | { apply: false; reason: string };

const rank = (status: ReceiptStatus) => {
  if (initial.includes(status)) return 0;
  const tracking = trackingOrder.indexOf(status);
  if (tracking >= 0) return tracking + 1;
  return { paid: 10, reconciled: 11, refund_requested: 12, refunded: 13, failed: -1 }[status as 'paid'] ?? -1;
};

/** May this actor ask for this status at all? (A no here is a 403, whatever the current status.) */
export const mayRequest = (actor: StatusActor, next: ReceiptStatus, failureIsSessionCode: boolean): boolean => {
  if (actor === 'service') return true;
  if (initial.includes(next) || serviceOnly.includes(next)) return false;
  if (next === 'failed') return actor === 'merchant' && failureIsSessionCode;
  return true;
};

/**
 * The receipt state machine: forward through the tracking statuses to paid and reconciled; any
 * pre-paid status may fail; after a failure the buyer may start again, and a payment still counts;
 * refunds follow payment. Anything else is not applied and says why.
 */
export const decideTransition = (current: ReceiptStatus, next: ReceiptStatus): StatusDecision => {
  if (current === next) return { apply: false, reason: `already ${current}` };
  if (next === 'failed') return prePaid.includes(current) ? { apply: true } : { apply: false, reason: `a ${current} receipt cannot fail` };
  if (current === 'failed') {
    return trackingOrder.includes(next) || next === 'paid' ? { apply: true } : { apply: false, reason: `a failed receipt cannot become ${next}` };
  }
  // A partly refunded receipt may be refunded again (the refund use case checks what is left).
  if (next === 'refund_requested') return current === 'paid' || current === 'reconciled' || current === 'refunded' ? { apply: true } : { apply: false, reason: `a ${current} receipt cannot be refunded` };
  if (next === 'refunded') return current === 'refund_requested' ? { apply: true } : { apply: false, reason: 'refunded follows refund_requested' };
  if (current === 'refund_requested' || current === 'refunded') return { apply: false, reason: `${current} is final` };
  if (next === 'reconciled' && current !== 'paid') return { apply: false, reason: 'reconciled follows paid' };
  return rank(next) > rank(current) ? { apply: true } : { apply: false, reason: `${next} would move the receipt back from ${current}` };
};

/**
 * A receipt nothing can change any more: refunded in full. Every other status may still move (a
 * failed receipt may still be paid, a paid or partly refunded one refunded), so more webhooks may come.
 */
export const isFinalReceipt = (receipt: Receipt): boolean =>
  receipt.status === 'refunded' && toCents(refundedUsd(receipt)) >= toCents(receipt.customerTotalUsd);
