import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { verify } from '@octokit/webhooks-methods';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReceiver } from '../support/receiver';
import { call, stackEnv, startStack, stopStack, type StartedStack } from '../support/stack';

/** Webhooks end to end on `npm start`: the status API, the queue on Azurite, the queue-triggered delivery. */
const dataDir = mkdtempSync(join(tmpdir(), 'webhooks-e2e-'));
let stack: StartedStack;

beforeAll(async () => {
  stack = await startStack(stackEnv(dataDir));
}, 120_000);
afterAll(async () => {
  await stopStack(stack);
  rmSync(dataDir, { recursive: true, force: true });
});

const createReceipt = (id: string, webhookUrl: string) =>
  call(stack.baseUrl, '/api/receipts', { method: 'POST', key: stack.apiKey, body: { id, lineItems: [{ label: 'Latte', priceUsd: 4.5 }], totalUsd: 4.5, webhook_url: webhookUrl } });
const report = (id: string, status: string) => call(stack.baseUrl, '/api/receipts/status', { method: 'POST', key: stack.apiKey, body: { id, status } });

describe('webhooks on the local stack', () => {
  it('delivers one signed webhook per status change, chaining pending → checkout_success', async () => {
    const receiver = await startReceiver([], { secret: stack.apiKey });
    try {
      expect((await createReceipt('e2e-chain', receiver.url)).status).toBe(201);
      for (const status of ['link_opened', 'buyer_logged_in', 'checkout_initialized', 'checkout_success']) {
        expect((await report('e2e-chain', status)).status).toBe(200);
      }
      const requests = await receiver.waitFor(4);
      const bodies = requests.map((request) => JSON.parse(request.body) as Record<string, unknown>);
      const chain = bodies.map((body) => [body.previousStatus, body.status]).sort((a, b) => order(a[1]) - order(b[1]));
      expect(chain).toEqual([
        ['pending', 'link_opened'],
        ['link_opened', 'buyer_logged_in'],
        ['buyer_logged_in', 'checkout_initialized'],
        ['checkout_initialized', 'checkout_success'],
      ]);
      for (const request of requests) {
        expect(Object.keys(JSON.parse(request.body))).toHaveLength(25);
        expect(await verify(stack.apiKey, request.body, request.headers['x-service-signature'] as string)).toBe(true);
        expect(request.verified).toEqual({ ok: true, event: JSON.parse(request.body), timestamp: Number(request.headers['x-service-timestamp']), deliveryId: request.headers['x-service-delivery'] });
      }
      expect(new Set(requests.map((request) => request.headers['x-service-delivery'])).size).toBe(4);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(receiver.received).toHaveLength(4);
    } finally {
      await receiver.close();
    }
  }, 30_000);

  it('retries a failed delivery once, 5 s later (not before 3.5 s; up to 10 s on a loaded machine), with the same delivery id and body, signed at its own time', async () => {
    const receiver = await startReceiver([500], { secret: stack.apiKey });
    try {
      await createReceipt('e2e-retry', receiver.url);
      await report('e2e-retry', 'link_opened');
      const [first, second] = await receiver.waitFor(2, 20_000);
      expect(second!.at - first!.at).toBeGreaterThanOrEqual(3_500);
      expect(second!.at - first!.at).toBeLessThanOrEqual(10_000);
      expect(second!.body).toBe(first!.body);
      expect(second!.headers['x-service-delivery']).toBe(first!.headers['x-service-delivery']);
      expect(second!.headers['x-service-signature']).toBe(first!.headers['x-service-signature']);
      const [t1, t2] = [first, second].map((request) => Number(request!.headers['x-service-timestamp']));
      expect(t2! - t1!).toBeGreaterThanOrEqual(3_500);
      expect(first!.verified).toMatchObject({ ok: true, timestamp: t1 });
      expect(second!.verified).toMatchObject({ ok: true, timestamp: t2 });
      const log = await call(stack.baseUrl, '/api/receipts/e2e-retry/deliveries', { key: stack.apiKey });
      expect((log.json.deliveries as Array<{ attempt: number; httpStatus: number }>).map((entry) => [entry.attempt, entry.httpStatus])).toEqual([[1, 500], [2, 200]]);
    } finally {
      await receiver.close();
    }
  }, 30_000);
});

const order = (status: unknown) => ['link_opened', 'buyer_logged_in', 'checkout_initialized', 'checkout_success'].indexOf(String(status));
