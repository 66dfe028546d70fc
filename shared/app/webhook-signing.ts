import { createHmac } from 'node:crypto';
import { WEBHOOK_EVENT, WEBHOOK_USER_AGENT } from '../domain/webhook';

/** `sha256=<hex HMAC-SHA256 of the exact body bytes>`, keyed with the receipt's signing secret. */
export const signWebhook = (secret: string, body: string): string => `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`;

const v1Of = (secret: string, body: string, timestamp: number) => createHmac('sha256', secret).update(`${timestamp}.${body}`, 'utf8').digest('hex');

/**
 * `t=<unix ms>,v1=<hex HMAC-SHA256 of "<t>.<exact body bytes>">`, same key: the signature a receiver
 * can bound in time, so a captured request replayed later is refused (shared/webhook-verify.mjs).
 * Each of `alsoBy` adds a `v1` of its own after it (a rotation's overlap: the secret rotated out).
 */
export const signWebhookAt = (secret: string, body: string, timestamp: number, alsoBy: readonly string[] = []): string =>
  [`t=${timestamp}`, ...[secret, ...alsoBy].map((key) => `v1=${v1Of(key, body, timestamp)}`)].join(',');

/**
 * The headers of one attempt, signed at `timestamp`: the time it is sent (whole ms), which the
 * Timestamp header carries too. The body's own `timestamp` is when the status changed.
 * `previousSecret` (a rotated-out secret, during its overlap) signs beside `secret`: a second `v1`
 * in the timestamped header, and the plain one, which holds a single signature, is still its own, so
 * a receiver not yet switched keeps verifying until the overlap ends.
 */
export const webhookHeaders = (prefix: string, input: { eventId: string; secret: string; previousSecret?: string; body: string; timestamp: number }): Record<string, string> => {
  const sentAt = Math.floor(input.timestamp);
  return {
    'Content-Type': 'application/json',
    [`${prefix}Signature`]: signWebhook(input.previousSecret ?? input.secret, input.body),
    [`${prefix}Signature-Timestamped`]: signWebhookAt(input.secret, input.body, sentAt, input.previousSecret === undefined ? [] : [input.previousSecret]),
    [`${prefix}Event`]: WEBHOOK_EVENT,
    [`${prefix}Delivery`]: input.eventId,
    [`${prefix}Timestamp`]: String(sentAt),
    'User-Agent': WEBHOOK_USER_AGENT,
  };
};
