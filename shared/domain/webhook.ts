import { createHmac } from 'node:crypto';
import { failureFields, type Receipt } from './receipt';

export const WEBHOOK_EVENT = 'receipt.status_updated';
export const WEBHOOK_USER_AGENT = 'Service-Webhook/1.0';
export const WEBHOOK_TIMEOUT_MS = 5_000;
export const WEBHOOK_RETRY_DELAY_S = 5;
export const WEBHOOK_ATTEMPTS = 2;

/** Every body field of the interface document, in its order; null where unknown. */
export const webhookBody = (receipt: Receipt, timestamp: number) => ({
  event: WEBHOOK_EVENT,
  receiptId: receipt.receiptId,
  status: receipt.status,
  previousStatus: receipt.previousStatus,
  ...failureFields(receipt),
  transactionHash: receipt.transactionHash,
  buyerWallet: receipt.buyerWallet,
  merchantWallet: receipt.wallet,
  totalUsd: receipt.totalUsd,
  customerTotalUsd: receipt.customerTotalUsd,
  onrampSourceAmountUsd: receipt.onrampSourceAmountUsd,
  onrampSessionId: receipt.onrampSessionId,
  isOnrampSessionUnique: receipt.isOnrampSessionUnique,
  token: receipt.token,
  transactionId: receipt.transactionId,
  metadata: receipt.metadata,
  brandKey: receipt.brandKey,
  timestamp,
});

/** `sha256=<hex HMAC-SHA256 of the exact body bytes>`, keyed with the merchant's API key. */
export const signWebhook = (secret: string, body: string): string => `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`;

/**
 * `t=<unix ms>,v1=<hex HMAC-SHA256 of "<t>.<exact body bytes>">`, same key: the signature a receiver
 * can bound in time, so a captured request replayed later is refused (shared/webhook-verify.mjs).
 */
export const signWebhookAt = (secret: string, body: string, timestamp: number): string =>
  `t=${timestamp},v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`, 'utf8').digest('hex')}`;

/**
 * The headers of one attempt, signed at `timestamp`: the time it is sent (whole ms), which the
 * Timestamp header carries too. The body's own `timestamp` is when the status changed.
 */
export const webhookHeaders = (prefix: string, input: { eventId: string; secret: string; body: string; timestamp: number }): Record<string, string> => {
  const sentAt = Math.floor(input.timestamp);
  return {
    'Content-Type': 'application/json',
    [`${prefix}Signature`]: signWebhook(input.secret, input.body),
    [`${prefix}Signature-Timestamped`]: signWebhookAt(input.secret, input.body, sentAt),
    [`${prefix}Event`]: WEBHOOK_EVENT,
    [`${prefix}Delivery`]: input.eventId,
    [`${prefix}Timestamp`]: String(sentAt),
    'User-Agent': WEBHOOK_USER_AGENT,
  };
};

/** One attempt at delivering an event, as the delivery log keeps it (its id `<eventId>:<attempt>` is claimed before sending). */
export interface DeliveryAttempt {
  id: string;
  receiptId: string;
  wallet: string;
  eventId: string;
  attempt: number;
  target: string;
  body: string;
  signingSubscriptionId: string | null;
  state: 'sending' | 'delivered' | 'failed';
  startedAt: number;
  httpStatus: number | null;
  error: string | null;
  durationMs: number | null;
}

export const attemptId = (eventId: string, attempt: number) => `${eventId}:${attempt}`;

/** The delivery log on the wire: what happened, not the body or the secret. */
export const toAttemptView = (attempt: DeliveryAttempt) => ({
  eventId: attempt.eventId,
  attempt: attempt.attempt,
  target: attempt.target,
  state: attempt.state,
  at: attempt.startedAt,
  httpStatus: attempt.httpStatus,
  error: attempt.error,
  durationMs: attempt.durationMs,
});
