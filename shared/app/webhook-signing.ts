import { createHmac } from 'node:crypto';
import { WEBHOOK_EVENT, WEBHOOK_USER_AGENT } from '../domain/webhook';

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
