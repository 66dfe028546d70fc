import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { webhookHeaders } from '../../shared/app/webhook-signing';
import { verifyWebhook } from '../../shared/webhook-verify.mjs';

describe('webhook headers', () => {
  const secret = 'key_test_9a2e';
  const body = '{"event":"receipt.status_updated","metadata":{"note":"Café ☕"},"timestamp":1700000000000}';
  const sentAt = 1_700_000_004_321;

  it('carry the plain signature and the timestamped one, whose t is the Timestamp header', () => {
    const headers = webhookHeaders('X-Service-', { eventId: 'e-1', secret, body, timestamp: sentAt });
    expect(headers).toEqual({
      'Content-Type': 'application/json',
      'X-Service-Signature': `sha256=${createHmac('sha256', secret).update(Buffer.from(body, 'utf8')).digest('hex')}`,
      'X-Service-Signature-Timestamped': `t=${sentAt},v1=${createHmac('sha256', secret).update(Buffer.from(`${sentAt}.${body}`, 'utf8')).digest('hex')}`,
      'X-Service-Event': 'receipt.status_updated',
      'X-Service-Delivery': 'e-1',
      'X-Service-Timestamp': String(sentAt),
      'User-Agent': 'Service-Webhook/1.0',
    });
    expect(verifyWebhook({ body: Buffer.from(body, 'utf8'), headers, secret, now: sentAt })).toMatchObject({ ok: true, timestamp: sentAt, deliveryId: 'e-1' });
  });

  it('use the configured prefix for every service header', () => {
    const headers = webhookHeaders('X-Acme-', { eventId: 'e-2', secret, body, timestamp: sentAt });
    expect(Object.keys(headers)).toEqual(['Content-Type', 'X-Acme-Signature', 'X-Acme-Signature-Timestamped', 'X-Acme-Event', 'X-Acme-Delivery', 'X-Acme-Timestamp', 'User-Agent']);
    expect(verifyWebhook({ body, headers, secret, now: sentAt, prefix: 'X-Acme-' })).toMatchObject({ ok: true, deliveryId: 'e-2' });
  });

  it('sign a whole number of milliseconds, the same one the Timestamp header carries', () => {
    const headers = webhookHeaders('X-Service-', { eventId: 'e-3', secret, body, timestamp: sentAt + 0.75 });
    expect(headers['X-Service-Timestamp']).toBe(String(sentAt));
    expect(headers['X-Service-Signature-Timestamped']).toMatch(new RegExp(`^t=${sentAt},v1=[0-9a-f]{64}$`));
  });
});
