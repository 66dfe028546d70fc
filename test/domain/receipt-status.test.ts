import { describe, expect, it } from 'vitest';
import type { ReceiptStatus } from '../../shared/domain/receipt';
import { decideTransition, mayRequest } from '../../shared/domain/receipt-status';

describe('the receipt state machine', () => {
  it.each<[ReceiptStatus, ReceiptStatus]>([
    ['pending', 'link_opened'],
    ['generated', 'link_opened'],
    ['link_opened', 'buyer_logged_in'],
    ['link_opened', 'checkout_success'],
    ['checkout_success', 'paid'],
    ['pending', 'paid'],
    ['paid', 'reconciled'],
    ['pending', 'failed'],
    ['checkout_initialized', 'failed'],
    ['failed', 'link_opened'],
    ['failed', 'paid'],
    ['paid', 'refund_requested'],
    ['reconciled', 'refund_requested'],
    ['refund_requested', 'refunded'],
    ['refunded', 'refund_requested'],
  ])('applies %s → %s', (from, to) => {
    expect(decideTransition(from, to)).toEqual({ apply: true });
  });

  it.each<[ReceiptStatus, ReceiptStatus]>([
    ['buyer_logged_in', 'link_opened'],
    ['checkout_success', 'checkout_initialized'],
    ['paid', 'checkout_success'],
    ['paid', 'failed'],
    ['reconciled', 'paid'],
    ['pending', 'reconciled'],
    ['failed', 'failed'],
    ['failed', 'reconciled'],
    ['link_opened', 'link_opened'],
    ['refunded', 'paid'],
    ['pending', 'refunded'],
    ['checkout_success', 'refund_requested'],
  ])('ignores %s → %s, saying why', (from, to) => {
    const decision = decideTransition(from, to);
    expect(decision.apply).toBe(false);
    expect((decision as { reason: string }).reason.length).toBeGreaterThan(0);
  });

  it('lets only the service set paid, reconciled and refunds, and only merchants fail with session codes', () => {
    for (const status of ['paid', 'reconciled', 'refund_requested', 'refunded', 'pending', 'generated'] as const) {
      expect(mayRequest('merchant', status, true)).toBe(false);
      expect(mayRequest('service', status, false)).toBe(true);
    }
    expect(mayRequest('merchant', 'failed', true)).toBe(true);
    expect(mayRequest('merchant', 'failed', false)).toBe(false);
    expect(mayRequest('portal', 'failed', true)).toBe(false);
    expect(mayRequest('portal', 'checkout_initialized', false)).toBe(true);
  });
});
