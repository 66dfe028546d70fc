import { createHmac } from 'node:crypto';
import { verify } from '@octokit/webhooks-methods';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { publicOnlyLookup } from '../../shared/adapters/http/webhook-sender';
import type { MemoryEventQueue } from '../../shared/adapters/memory/deliveries';
import type { AppDeps } from '../../shared/app/deps';
import type { WebhookMessage } from '../../shared/app/receipt-status';
import { deliverWebhook, listDeliveries } from '../../shared/app/webhooks';
import { createReceipt } from '../../shared/app/receipts';
import { changeStatus } from '../../shared/app/receipt-status';
import { rotateWebhookSecret } from '../../shared/app/webhook-secrets';
import { memoryDeps, setDeps } from '../../shared/composition';
import { addMerchant, invoke, type Merchant } from '../support/http';
import { startReceiver, type Behaviour, type ReceiverOptions } from '../support/receiver';
import { wallets } from '../support/stores';
import { verifyWebhook } from '../../shared/webhook-verify.mjs';

let deps: AppDeps;
let merchant: Merchant;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
const as = () => ({ 'x-subscription-id': merchant.subscriptionId });
/** The service's clock: real time plus `offset`, so a test can let minutes or hours pass. */
let offset = 0;
const clock = { now: () => Date.now() + offset };

const queued = () => (deps.queue as MemoryEventQueue).take('webhooks');

/** A receipt pointed at the receiver, moved to link_opened: answers the queued first-attempt message. */
const firstEvent = async (behaviours: Behaviour[] = [], options: ReceiverOptions = {}): Promise<WebhookMessage> => {
  receiver = await startReceiver(behaviours, { secret: merchant.apiKey, now: clock.now, ...options });
  await invoke('receipts-create', { method: 'POST', path: '/api/receipts', headers: as(), body: { id: 'r-1', lineItems: [{ label: 'Tea', priceUsd: 4 }], totalUsd: 4, webhook_url: receiver.url, transactionId: 'T-1', metadata: { table: 2 } } });
  await invoke('receipts-status-post', { method: 'POST', path: '/api/receipts/status', headers: as(), body: { id: 'r-1', status: 'link_opened' } });
  const [message] = queued();
  return message!.message as WebhookMessage;
};

const log = async () => (await invoke('receipts-deliveries', { path: '/api/receipts/r-1/deliveries', headers: as() })).json.deliveries as Array<Record<string, unknown>>;

beforeEach(async () => {
  offset = 0;
  deps = memoryDeps({ clock });
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
      'onrampSessionId', 'isOnrampSessionUnique', 'token', 'amountPaid', 'paidAt', 'transactionId', 'metadata', 'brandKey', 'timestamp',
    ]);
    expect(body).toMatchObject({ event: 'receipt.status_updated', receiptId: 'r-1', status: 'link_opened', previousStatus: 'pending', failureCode: null, merchantWallet: wallets.alice, totalUsd: 4, transactionId: 'T-1', metadata: { table: 2 }, isOnrampSessionUnique: false, amountPaid: null, paidAt: null });
    expect(request!.headers).toMatchObject({
      'content-type': 'application/json',
      'x-service-event': 'receipt.status_updated',
      'x-service-delivery': expect.stringMatching(/^[0-9a-f-]{36}$/),
      'x-service-timestamp': expect.stringMatching(/^\d+$/),
      'user-agent': 'Service-Webhook/1.0',
    });
    expect(await verify(merchant.apiKey, request!.body, request!.headers['x-service-signature'] as string)).toBe(true);
    expect(await verify('another-key', request!.body, request!.headers['x-service-signature'] as string)).toBe(false);
    // the timestamped signature: t is the time of sending (the Timestamp header), v1 signs "<t>.<body>"
    const t = Number(request!.headers['x-service-timestamp']);
    expect(t).toBeGreaterThanOrEqual(body.timestamp);
    expect(t).toBeLessThanOrEqual(clock.now());
    expect(request!.headers['x-service-signature-timestamped']).toBe(`t=${t},v1=${createHmac('sha256', merchant.apiKey).update(`${t}.${request!.body}`).digest('hex')}`);
    expect(request!.verified).toEqual({ ok: true, event: body, timestamp: t, deliveryId: request!.headers['x-service-delivery'] });
    expect(verifyWebhook({ body: request!.body, headers: request!.headers, secret: 'another-key', now: t })).toEqual({ ok: false, reason: 'bad_signature' });
    expect(await log()).toEqual([expect.objectContaining({ attempt: 1, state: 'delivered', httpStatus: 200, error: null, durationMs: expect.any(Number) })]);
  });

  it('queues one retry 5 s later after a failure, with the same delivery id and identical bytes', async () => {
    const message = await firstEvent([500]);
    await deliverWebhook(deps, message);
    const [retry] = queued();
    expect(retry).toMatchObject({ delaySeconds: 5, message: { eventId: message.eventId, body: message.body, attempt: 2 } });
    offset += 5_000;
    await deliverWebhook(deps, retry!.message as WebhookMessage);
    const [first, second] = await receiver.waitFor(2);
    expect(second!.body).toBe(first!.body);
    expect(second!.headers['x-service-delivery']).toBe(first!.headers['x-service-delivery']);
    expect(second!.headers['x-service-signature']).toBe(first!.headers['x-service-signature']);
    // each attempt is signed when it is sent: the retry carries its own, later t, and both pass a 5-minute window
    const [t1, t2] = [first, second].map((request) => Number(request!.headers['x-service-timestamp']));
    expect(t2! - t1!).toBeGreaterThanOrEqual(5_000);
    expect(first!.verified).toMatchObject({ ok: true, timestamp: t1 });
    expect(second!.verified).toMatchObject({ ok: true, timestamp: t2 });
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

  it('signs the webhooks of a receipt made without a key (the console’s terminal, an agent’s purchase) with the shop’s webhook signing secret when sent, never with one of its keys', async () => {
    receiver = await startReceiver();
    await createReceipt(deps, { wallet: merchant.wallet, subscriptionId: null }, { id: 'r-1', lineItems: [{ label: 'Tea', priceUsd: 4 }], totalUsd: 4, webhook_url: receiver.url });
    await changeStatus(deps, { wallet: merchant.wallet, receiptId: 'r-1', status: 'link_opened', actor: 'merchant' });
    const [first] = queued();
    expect((first!.message as WebhookMessage).signingSubscriptionId).toBeNull();
    // No secret yet: nothing is sent (not even signed by the shop's key), and the log says what to do.
    await deliverWebhook(deps, first!.message as WebhookMessage);
    expect(receiver.received).toEqual([]);
    expect((await listDeliveries(deps, merchant.wallet, 'r-1')).deliveries[0]).toMatchObject({ state: 'failed', signedBy: null, signedWithSecret: null, error: expect.stringContaining('no webhook signing secret for this shop') });
    // A secret made later signs the next attempts.
    const { webhookSecret } = await rotateWebhookSecret(deps, merchant.wallet);
    await changeStatus(deps, { wallet: merchant.wallet, receiptId: 'r-1', status: 'buyer_logged_in', actor: 'merchant' });
    const [second] = queued();
    await deliverWebhook(deps, second!.message as WebhookMessage);
    const [request] = await receiver.waitFor(1);
    expect(verifyWebhook({ body: request!.body, headers: request!.headers, secret: webhookSecret, now: clock.now() }).ok).toBe(true);
    expect(verifyWebhook({ body: request!.body, headers: request!.headers, secret: merchant.apiKey, now: clock.now() })).toEqual({ ok: false, reason: 'bad_signature' });
    expect((await listDeliveries(deps, merchant.wallet, 'r-1')).deliveries.find((entry) => entry.state === 'delivered')).toMatchObject({ signedBy: null, signedWithSecret: webhookSecret.slice(0, 10) });
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

  it('names every service header, the timestamped signature too, with the configured prefix', async () => {
    const message = await firstEvent([], { prefix: 'X-Acme-' });
    await deliverWebhook({ ...deps, settings: { ...deps.settings, webhookHeaderPrefix: 'X-Acme-' } }, message);
    const [request] = await receiver.waitFor(1);
    expect(Object.keys(request!.headers).filter((name) => name.startsWith('x-acme-')).sort()).toEqual([
      'x-acme-delivery', 'x-acme-event', 'x-acme-signature', 'x-acme-signature-timestamped', 'x-acme-timestamp',
    ]);
    expect(request!.verified).toMatchObject({ ok: true, deliveryId: message.eventId });
  });

  it('a receiver with a 5-minute window refuses a delivery signed more than 5 minutes ago', async () => {
    const message = await firstEvent([], { now: () => clock.now() + 300_001 });
    await deliverWebhook(deps, message);
    const [request] = await receiver.waitFor(1);
    expect(request!.verified).toEqual({ ok: false, reason: 'too_old' });
    expect((await log())[0]).toMatchObject({ state: 'failed', httpStatus: 400 });
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
    expect(entry!.durationMs as number).toBeLessThan(8_000);
  }, 15_000);

  it('redelivers a logged event as a new attempt with the same delivery id', async () => {
    const message = await firstEvent();
    await deliverWebhook(deps, message);
    offset += 6 * 3_600_000;
    const answer = await invoke('receipts-redeliver', { method: 'POST', path: `/api/receipts/r-1/deliveries/${message.eventId}/redeliver`, headers: as() });
    expect(answer).toMatchObject({ status: 200, json: { ok: true, eventId: message.eventId, attempt: 2, delivered: true, httpStatus: 200 } });
    const [first, again] = await receiver.waitFor(2);
    expect(again!.headers['x-service-delivery']).toBe(first!.headers['x-service-delivery']);
    expect(again!.body).toBe(first!.body);
    // hours later: the redelivery is signed afresh and accepted; the first attempt's headers replayed now are not
    expect(again!.verified).toMatchObject({ ok: true, timestamp: Number(again!.headers['x-service-timestamp']) });
    expect(Number(again!.headers['x-service-timestamp']) - Number(first!.headers['x-service-timestamp'])).toBeGreaterThanOrEqual(6 * 3_600_000);
    expect(verifyWebhook({ body: first!.body, headers: first!.headers, secret: merchant.apiKey, now: clock.now() })).toEqual({ ok: false, reason: 'too_old' });
    expect(await invoke('receipts-redeliver', { method: 'POST', path: '/api/receipts/r-1/deliveries/nope/redeliver', headers: as() })).toMatchObject({ status: 404 });
    const other = await addMerchant(deps, wallets.bob);
    expect(await invoke('receipts-deliveries', { path: '/api/receipts/r-1/deliveries', headers: { 'x-subscription-id': other.subscriptionId } })).toMatchObject({ status: 404 });
    // Another merchant cannot send this merchant's event again, nor learn that it exists.
    const foreign = await invoke('receipts-redeliver', { method: 'POST', path: `/api/receipts/r-1/deliveries/${message.eventId}/redeliver`, headers: { 'x-subscription-id': other.subscriptionId } });
    expect(foreign).toMatchObject({ status: 404, json: { error: 'not_found' } });
    expect(receiver.received).toHaveLength(2);
  });

  it('sends a signed test event on request and answers with the outcome', async () => {
    receiver = await startReceiver([200, 500], { secret: merchant.apiKey, now: clock.now });
    const ok = await invoke('webhooks-test', { method: 'POST', path: '/api/webhooks/test', headers: as(), body: { url: receiver.url } });
    expect(ok).toMatchObject({ status: 200, json: { ok: true, delivered: true, httpStatus: 200 } });
    const [request] = await receiver.waitFor(1);
    expect(await verify(merchant.apiKey, request!.body, request!.headers['x-service-signature'] as string)).toBe(true);
    expect(request!.verified).toMatchObject({ ok: true, event: { receiptId: 'R-TEST-EVENT' }, timestamp: JSON.parse(request!.body).timestamp });
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

  // A literal address resolves to itself: the same check a name resolving to that address meets.
  it.each(['::127.0.0.1', '::7f00:1', '::a00:1', '64:ff9b:1::a00:1', '168.63.129.16'])('refuses the connection when the resolved address is %s', async (address) => {
    const error = await new Promise<NodeJS.ErrnoException | null>((resolve) => publicOnlyLookup(address, {}, (failure) => resolve(failure)));
    expect(error?.code).toBe('ETARGETREFUSED');
  });

  it('refuses private and plain-http targets before connecting', async () => {
    deps = memoryDeps({ webhookSender: (await import('../../shared/adapters/http/webhook-sender')).httpWebhookSender({ development: false }) });
    for (const url of ['https://10.1.2.3/hook', 'https://[::a00:1]/hook', 'https://[64:ff9b:1::a9fe:a9fe]/hook', 'https://168.63.129.16/machine']) {
      const result = await deps.webhookSender.send({ url, headers: {}, body: '{}', timeoutMs: 1000 });
      expect(result).toMatchObject({ httpStatus: null, error: expect.stringContaining('target refused') });
    }
  });

  it('refuses IPv4-compatible, local-use NAT64 and Azure platform addresses when the URL is given', async () => {
    setDeps({ ...deps, settings: { ...deps.settings, development: false } });
    for (const url of ['https://[::127.0.0.1]/x', 'https://[::a00:1]/x', 'https://[64:ff9b:1::a00:1]/x', 'https://168.63.129.16/x']) {
      const created = await invoke('receipts-create', { method: 'POST', path: '/api/receipts', headers: as(), body: { id: 'r-target', lineItems: [{ label: 'Tea', priceUsd: 4 }], totalUsd: 4, webhook_url: url } });
      expect(created).toMatchObject({ status: 400, json: { field: 'webhook_url' } });
      expect(await invoke('webhooks-test', { method: 'POST', path: '/api/webhooks/test', headers: as(), body: { url } })).toMatchObject({ status: 400, json: { field: 'url' } });
    }
  });
});
