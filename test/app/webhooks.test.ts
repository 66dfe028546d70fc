import { verify } from '@octokit/webhooks-methods';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { publicOnlyLookup } from '../../shared/adapters/http/webhook-sender';
import type { MemoryEventQueue } from '../../shared/adapters/memory/deliveries';
import type { AppDeps } from '../../shared/app/deps';
import type { WebhookMessage } from '../../shared/app/receipt-status';
import { deliverWebhook } from '../../shared/app/webhooks';
import { memoryDeps, setDeps } from '../../shared/composition';
import { addMerchant, invoke, type Merchant } from '../support/http';
import { startReceiver, type Behaviour } from '../support/receiver';
import { wallets } from '../support/stores';

let deps: AppDeps;
let merchant: Merchant;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
const as = () => ({ 'x-subscription-id': merchant.subscriptionId });

const queued = () => (deps.queue as MemoryEventQueue).take('webhooks');

/** A receipt pointed at the receiver, moved to link_opened: answers the queued first-attempt message. */
const firstEvent = async (behaviours: Behaviour[] = []): Promise<WebhookMessage> => {
  receiver = await startReceiver(behaviours);
  await invoke('receipts-create', { method: 'POST', path: '/api/receipts', headers: as(), body: { id: 'r-1', lineItems: [{ label: 'Tea', priceUsd: 4 }], totalUsd: 4, webhook_url: receiver.url, transactionId: 'T-1', metadata: { table: 2 } } });
  await invoke('receipts-status-post', { method: 'POST', path: '/api/receipts/status', headers: as(), body: { id: 'r-1', status: 'link_opened' } });
  const [message] = queued();
  return message!.message as WebhookMessage;
};

const log = async () => (await invoke('receipts-deliveries', { path: '/api/receipts/r-1/deliveries', headers: as() })).json.deliveries as Array<Record<string, unknown>>;

beforeEach(async () => {
  deps = memoryDeps();
  setDeps(deps);
  merchant = await addMerchant(deps, wallets.alice);
});
afterEach(() => receiver?.close());

describe('webhook delivery', () => {
  it('sends every body field with the headers of the interface document and a signature over the exact bytes', async () => {
    await deliverWebhook(deps, await firstEvent());
    const [request] = await receiver.waitFor(1);
    const body = JSON.parse(request!.body);
    expect(Object.keys(body)).toEqual([
      'event', 'receiptId', 'status', 'previousStatus', 'failureCode', 'failureCategory', 'failureReason', 'failureAction', 'providerErrorCode',
      'providerRequestId', 'transactionHash', 'buyerWallet', 'merchantWallet', 'totalUsd', 'customerTotalUsd', 'onrampSourceAmountUsd',
      'onrampSessionId', 'isOnrampSessionUnique', 'token', 'transactionId', 'metadata', 'brandKey', 'timestamp',
    ]);
    expect(body).toMatchObject({ event: 'receipt.status_updated', receiptId: 'r-1', status: 'link_opened', previousStatus: 'pending', failureCode: null, merchantWallet: wallets.alice, totalUsd: 4, transactionId: 'T-1', metadata: { table: 2 }, isOnrampSessionUnique: false });
    expect(request!.headers).toMatchObject({
      'content-type': 'application/json',
      'x-service-event': 'receipt.status_updated',
      'x-service-delivery': expect.stringMatching(/^[0-9a-f-]{36}$/),
      'x-service-timestamp': String(body.timestamp),
      'user-agent': 'Service-Webhook/1.0',
    });
    expect(await verify(merchant.apiKey, request!.body, request!.headers['x-service-signature'] as string)).toBe(true);
    expect(await verify('another-key', request!.body, request!.headers['x-service-signature'] as string)).toBe(false);
    expect(await log()).toEqual([expect.objectContaining({ attempt: 1, state: 'delivered', httpStatus: 200, error: null, durationMs: expect.any(Number) })]);
  });

  it('queues one retry 5 s later after a failure, with the same delivery id and identical bytes', async () => {
    const message = await firstEvent([500]);
    await deliverWebhook(deps, message);
    const [retry] = queued();
    expect(retry).toMatchObject({ delaySeconds: 5, message: { eventId: message.eventId, body: message.body, attempt: 2 } });
    await deliverWebhook(deps, retry!.message as WebhookMessage);
    const [first, second] = await receiver.waitFor(2);
    expect(second!.body).toBe(first!.body);
    expect(second!.headers['x-service-delivery']).toBe(first!.headers['x-service-delivery']);
    expect(second!.headers['x-service-signature']).toBe(first!.headers['x-service-signature']);
    expect((await log()).map((entry) => [entry.attempt, entry.state, entry.httpStatus])).toEqual([[1, 'failed', 500], [2, 'delivered', 200]]);
  });

  it('stops after the second failure: exactly two attempts, both in the log', async () => {
    const message = await firstEvent([503, 503, 503]);
    await deliverWebhook(deps, message);
    await deliverWebhook(deps, queued()[0]!.message as WebhookMessage);
    expect(queued()).toEqual([]);
    expect((await log()).map((entry) => [entry.attempt, entry.state, entry.httpStatus])).toEqual([[1, 'failed', 503], [2, 'failed', 503]]);
    expect(receiver.received).toHaveLength(2);
  });

  it('never sends an attempt twice when the queue hands over the same message again', async () => {
    const message = await firstEvent();
    await deliverWebhook(deps, message);
    await deliverWebhook(deps, message);
    await Promise.all([deliverWebhook(deps, message), deliverWebhook(deps, message)]);
    expect(receiver.received).toHaveLength(1);
  });

  it('claims nothing when the signing key cannot be read, so the queue’s redelivery still sends', async () => {
    const message = await firstEvent();
    const get = deps.subscriptions.get.bind(deps.subscriptions);
    deps.subscriptions.get = async () => Promise.reject(new Error('store hiccup'));
    await expect(deliverWebhook(deps, message)).rejects.toThrow('store hiccup');
    deps.subscriptions.get = get;
    await deliverWebhook(deps, message);
    expect(receiver.received).toHaveLength(1);
  });

  it('queues the retry again when the message of a failed attempt comes back', async () => {
    const message = await firstEvent([500]);
    const queue = deps.queue as MemoryEventQueue;
    const send = queue.send.bind(queue);
    queue.send = async () => Promise.reject(new Error('queue down'));
    await expect(deliverWebhook(deps, message)).rejects.toThrow('queue down');
    queue.send = send;
    await deliverWebhook(deps, message);
    expect(receiver.received).toHaveLength(1);
    expect(queued()).toEqual([expect.objectContaining({ delaySeconds: 5, message: expect.objectContaining({ attempt: 2 }) })]);
  });

  it('does not follow a redirect: a 3xx is a failed attempt', async () => {
    await deliverWebhook(deps, await firstEvent(['redirect']));
    expect((await log())[0]).toMatchObject({ state: 'failed', httpStatus: 302, error: expect.stringContaining('not followed') });
  });

  it('cuts a receiver that does not answer at 5 seconds', async () => {
    await deliverWebhook(deps, await firstEvent(['hang']));
    const [entry] = await log();
    expect(entry).toMatchObject({ state: 'failed', httpStatus: null, error: 'no answer within 5000 ms' });
    expect(entry!.durationMs as number).toBeGreaterThanOrEqual(4_900);
    expect(entry!.durationMs as number).toBeLessThan(6_500);
  }, 15_000);

  it('redelivers a logged event as a new attempt with the same delivery id', async () => {
    const message = await firstEvent();
    await deliverWebhook(deps, message);
    const answer = await invoke('receipts-redeliver', { method: 'POST', path: `/api/receipts/r-1/deliveries/${message.eventId}/redeliver`, headers: as() });
    expect(answer).toMatchObject({ status: 200, json: { ok: true, eventId: message.eventId, attempt: 2, delivered: true, httpStatus: 200 } });
    const [first, again] = await receiver.waitFor(2);
    expect(again!.headers['x-service-delivery']).toBe(first!.headers['x-service-delivery']);
    expect(again!.body).toBe(first!.body);
    expect(await invoke('receipts-redeliver', { method: 'POST', path: '/api/receipts/r-1/deliveries/nope/redeliver', headers: as() })).toMatchObject({ status: 404 });
    const other = await addMerchant(deps, wallets.bob);
    expect(await invoke('receipts-deliveries', { path: '/api/receipts/r-1/deliveries', headers: { 'x-subscription-id': other.subscriptionId } })).toMatchObject({ status: 404 });
  });

  it('sends a signed test event on request and answers with the outcome', async () => {
    receiver = await startReceiver([200, 500]);
    const ok = await invoke('webhooks-test', { method: 'POST', path: '/api/webhooks/test', headers: as(), body: { url: receiver.url } });
    expect(ok).toMatchObject({ status: 200, json: { ok: true, delivered: true, httpStatus: 200 } });
    const [request] = await receiver.waitFor(1);
    expect(await verify(merchant.apiKey, request!.body, request!.headers['x-service-signature'] as string)).toBe(true);
    const failed = await invoke('webhooks-test', { method: 'POST', path: '/api/webhooks/test', headers: as(), body: { url: receiver.url } });
    expect(failed.json).toMatchObject({ delivered: false, httpStatus: 500 });
    setDeps({ ...deps, settings: { ...deps.settings, development: false } });
    expect(await invoke('webhooks-test', { method: 'POST', path: '/api/webhooks/test', headers: as(), body: { url: receiver.url } })).toMatchObject({ status: 400, json: { field: 'url' } });
  });
});

describe('target rules at delivery (production)', () => {
  it('refuses a target whose name resolves to a non-public address, on the address the connection would use', async () => {
    const error = await new Promise<NodeJS.ErrnoException | null>((resolve) => publicOnlyLookup('localhost', {}, (failure) => resolve(failure)));
    expect(error?.code).toBe('ETARGETREFUSED');
  });

  it('refuses private and plain-http targets before connecting', async () => {
    deps = memoryDeps({ webhookSender: (await import('../../shared/adapters/http/webhook-sender')).httpWebhookSender({ development: false }) });
    const result = await deps.webhookSender.send({ url: 'https://10.1.2.3/hook', headers: {}, body: '{}', timeoutMs: 1000 });
    expect(result).toMatchObject({ httpStatus: null, error: expect.stringContaining('target refused') });
  });
});
