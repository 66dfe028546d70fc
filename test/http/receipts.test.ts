import { beforeEach, describe, expect, it } from 'vitest';
import type { MemoryEventQueue } from '../../shared/adapters/memory/deliveries';
import type { AppDeps } from '../../shared/app/deps';
import { memoryDeps, setDeps } from '../../shared/composition';
import { addMerchant, invoke, type Merchant } from '../support/http';
import { tickingClock } from '../support/fixtures';
import { wallets } from '../support/stores';

let deps: AppDeps;
let alice: Merchant;
let bob: Merchant;
const as = (merchant: Merchant) => ({ 'x-subscription-id': merchant.subscriptionId });
const lines = [
  { label: 'Espresso', priceUsd: 3.5, qty: 2 },
  { label: 'Croissant', priceUsd: 2.75 },
];
const create = (body: Record<string, unknown>, merchant = alice) => invoke('receipts-create', { method: 'POST', path: '/api/receipts', headers: as(merchant), body });
const report = (body: Record<string, unknown>, merchant = alice) => invoke('receipts-status-post', { method: 'POST', path: '/api/receipts/status', headers: as(merchant), body });
const queued = () => (deps.queue as MemoryEventQueue).take('webhooks').map((entry) => entry.message as { body: string; eventId: string });

beforeEach(async () => {
  deps = memoryDeps({ clock: tickingClock() });
  setDeps(deps);
  alice = await addMerchant(deps, wallets.alice);
  bob = await addMerchant(deps, wallets.bob);
});

describe('POST /api/receipts', () => {
  it('creates a pending receipt under the caller’s id and answers 201 with the payment URL', async () => {
    const answer = await create({ id: 'order-1001', lineItems: lines, totalUsd: 6.25, transactionId: 'T-9', metadata: { table: 4 } });
    expect(answer).toMatchObject({ status: 201, json: { id: 'order-1001', paymentUrl: `${deps.settings.baseUrl}/pay/order-1001`, status: 'pending' } });
    const stored = await invoke('receipts-get', { path: '/api/receipts/order-1001', headers: as(alice) });
    expect(stored.json).toMatchObject({ receiptId: 'order-1001', status: 'pending', totalUsd: 6.25, transactionId: 'T-9', metadata: { table: 4 }, brandName: deps.settings.brandName });
    // No Processing Fee line: the buyer's total adds the platform's share (1 % by default) on top.
    expect(stored.json.customerTotalUsd).toBe(6.31);
  });

  it('is idempotent for the same body and answers 409 conflict for another body or another merchant’s id', async () => {
    const body = { id: 'order-1', lineItems: lines, totalUsd: 6.25 };
    const first = await create(body);
    const again = await create({ ...body, lineItems: [...lines] });
    expect({ status: again.status, json: again.json }).toEqual({ status: 201, json: first.json });
    expect(await create({ ...body, totalUsd: 6.25, transactionId: 'other' })).toMatchObject({ status: 409, json: { error: 'conflict' } });
    expect(await create(body, bob)).toMatchObject({ status: 409, json: { error: 'conflict' } });
  });

  it.each([
    [{ lineItems: lines, totalUsd: 6.25 }, 'id'],
    [{ id: 'has space', lineItems: lines, totalUsd: 6.25 }, 'id'],
    [{ id: 'x'.repeat(65), lineItems: lines, totalUsd: 6.25 }, 'id'],
    [{ id: 'status', lineItems: lines, totalUsd: 6.25 }, 'id'],
    [{ id: 'Refund', lineItems: lines, totalUsd: 6.25 }, 'id'],
    [{ id: 'a', lineItems: [], totalUsd: 0 }, 'lineItems'],
    [{ id: 'a', totalUsd: 1 }, 'lineItems'],
    [{ id: 'a', lineItems: lines }, 'totalUsd'],
    [{ id: 'a', lineItems: lines, totalUsd: 6.26 }, 'totalUsd'],
    [{ id: 'a', lineItems: [{ label: 'x', priceUsd: 1.001 }], totalUsd: 1 }, 'lineItems.0.priceUsd'],
    [{ id: 'a', lineItems: lines, totalUsd: 6.25, metadata: 'text' }, 'metadata'],
    [{ id: 'a', lineItems: lines, totalUsd: 6.25, metadata: { blob: 'x'.repeat(4100) } }, 'metadata'],
    [{ id: 'a', lineItems: lines, totalUsd: 6.25, redirect_url: 'ftp://x' }, 'redirect_url'],
    [{ id: 'a', lineItems: lines, totalUsd: 6.25, webhook_url: 'not a url' }, 'webhook_url'],
  ])('%j → 400 invalid_input naming %s', async (body, field) => {
    expect(await create(body)).toMatchObject({ status: 400, json: { error: 'invalid_input', field } });
  });

  it('refuses http, local and private webhook targets outside development', async () => {
    setDeps({ ...deps, settings: { ...deps.settings, development: false } });
    for (const url of ['http://hooks.example.com/x', 'https://127.0.0.1/x', 'https://192.168.1.10/x', 'https://metadata.internal/x', 'https://[fe80::1]/x', 'https://[::ffff:127.0.0.1]/x', 'https://[::ffff:169.254.169.254]/', 'https://[64:ff9b::a00:5]/x']) {
      expect(await create({ id: `w-${Math.random().toString(36).slice(2)}`, lineItems: lines, totalUsd: 6.25, webhook_url: url })).toMatchObject({ status: 400, json: { field: 'webhook_url' } });
    }
    expect((await create({ id: 'w-ok', lineItems: lines, totalUsd: 6.25, webhook_url: 'https://hooks.example.com/receipts' })).status).toBe(201);
  });
});

describe('reading receipts', () => {
  beforeEach(async () => {
    for (let n = 1; n <= 5; n++) await create({ id: `r-${n}`, lineItems: lines, totalUsd: 6.25 });
    await create({ id: 'bob-1', lineItems: lines, totalUsd: 6.25 }, bob);
  });

  it('lists newest first, a page at a time, with brandName, and filters by status', async () => {
    const first = await invoke('receipts-list', { path: '/api/receipts?limit=2', headers: as(alice) });
    expect((first.json.receipts as Array<{ receiptId: string; brandName: string }>).map((r) => r.receiptId)).toEqual(['r-5', 'r-4']);
    expect((first.json.receipts as Array<{ brandName: string }>)[0]!.brandName).toBe(deps.settings.brandName);
    const second = await invoke('receipts-list', { path: `/api/receipts?limit=2&cursor=${first.json.nextCursor}`, headers: as(alice) });
    expect((second.json.receipts as Array<{ receiptId: string }>).map((r) => r.receiptId)).toEqual(['r-3', 'r-2']);
    const last = await invoke('receipts-list', { path: `/api/receipts?limit=2&cursor=${second.json.nextCursor}`, headers: as(alice) });
    expect(last.json).toMatchObject({ receipts: [{ receiptId: 'r-1' }], nextCursor: null });
    await report({ id: 'r-2', status: 'link_opened' });
    const opened = await invoke('receipts-list', { path: '/api/receipts?status=link_opened', headers: as(alice) });
    expect((opened.json.receipts as Array<{ receiptId: string }>).map((r) => r.receiptId)).toEqual(['r-2']);
    expect((await invoke('receipts-list', { path: '/api/receipts', headers: as(alice) })).json.receipts).toHaveLength(5);
  });

  it('answers 404 not_found for another merchant’s receipt, and 400 for bad list parameters', async () => {
    expect(await invoke('receipts-get', { path: '/api/receipts/bob-1', headers: as(alice) })).toMatchObject({ status: 404, json: { error: 'not_found' } });
    expect(await invoke('receipts-status-get', { path: '/api/receipts/status?id=bob-1', headers: as(alice) })).toMatchObject({ status: 404 });
    for (const [query, field] of [['limit=0', 'limit'], ['limit=201', 'limit'], ['status=lost', 'status'], ['cursor=%%%', 'cursor']]) {
      expect(await invoke('receipts-list', { path: `/api/receipts?${query}`, headers: as(alice) })).toMatchObject({ status: 400, json: { field } });
    }
    expect(await invoke('receipts-status-get', { path: '/api/receipts/status', headers: as(alice) })).toMatchObject({ status: 400, json: { field: 'id' } });
    // Ids that could not be store keys are refused as input, or simply not found: never a 500.
    expect(await invoke('receipts-status-get', { path: '/api/receipts/status?id=a/b', headers: as(alice) })).toMatchObject({ status: 400, json: { field: 'id' } });
    expect(await report({ id: 'a#b', status: 'link_opened' })).toMatchObject({ status: 400, json: { field: 'id' } });
    for (const path of ['/api/receipts/a%2Fb', '/api/receipts/..', '/api/receipts/a%23b/deliveries']) {
      const name = path.endsWith('deliveries') ? 'receipts-deliveries' : 'receipts-get';
      expect(await invoke(name, { path, headers: as(alice) })).toMatchObject({ status: 404, json: { error: 'not_found' } });
    }
  });
});

describe('status changes', () => {
  beforeEach(async () => {
    await create({ id: 'r-1', lineItems: lines, totalUsd: 6.25, webhook_url: 'http://127.0.0.1:9/hook' });
  });

  it('applies forward tracking statuses, each with exactly one event, and answers the status view', async () => {
    const answer = await report({ id: 'r-1', status: 'link_opened' });
    expect(answer).toMatchObject({ status: 200, json: { ok: true, receiptId: 'r-1', status: 'link_opened', previousStatus: 'pending', failureCode: null } });
    await report({ id: 'r-1', status: 'checkout_initialized' });
    const events = queued().map((message) => JSON.parse(message.body) as { status: string; previousStatus: string });
    expect(events.map((event) => [event.previousStatus, event.status])).toEqual([
      ['pending', 'link_opened'],
      ['link_opened', 'checkout_initialized'],
    ]);
    const stored = (await deps.receipts.get(wallets.alice, 'r-1'))!.value;
    expect(stored.pendingEvents).toEqual([]);
    expect(stored.statusHistory.map((change) => change.status)).toEqual(['link_opened', 'checkout_initialized']);
  });

  it('ignores a backwards status with 200 and no event', async () => {
    await report({ id: 'r-1', status: 'checkout_initialized' });
    queued();
    expect(await report({ id: 'r-1', status: 'link_opened' })).toMatchObject({ status: 200, json: { ok: true, ignored: true, reason: expect.any(String), status: 'checkout_initialized' } });
    expect(queued()).toEqual([]);
  });

  it('answers 400 for an unknown status and 403 for one the merchant may not set', async () => {
    expect(await report({ id: 'r-1', status: 'shipped' })).toMatchObject({ status: 400, json: { error: 'invalid_input', field: 'status' } });
    for (const status of ['paid', 'reconciled', 'refunded', 'pending']) {
      expect(await report({ id: 'r-1', status })).toMatchObject({ status: 403, json: { error: 'forbidden' } });
    }
    expect(await report({ id: 'r-1', status: 'failed', failureCode: 'PORTAL_PAY_CARD_DECLINED' })).toMatchObject({ status: 403 });
    expect(await report({ id: 'r-1', status: 'failed' })).toMatchObject({ status: 403 });
    expect(await report({ id: 'nope', status: 'link_opened' })).toMatchObject({ status: 404, json: { error: 'not_found' } });
  });

  it('records a session failure with its registry fields', async () => {
    const answer = await report({ id: 'r-1', status: 'failed', failureCode: 'PORTAL_SESSION_EXPIRED' });
    expect(answer.json).toMatchObject({ status: 'failed', failureCode: 'PORTAL_SESSION_EXPIRED', failureCategory: 'session', failureReason: 'The session expired', providerErrorCode: null });
    const body = JSON.parse(queued()[0]!.body);
    expect(body).toMatchObject({ status: 'failed', previousStatus: 'pending', failureCode: 'PORTAL_SESSION_EXPIRED', failureCategory: 'session' });
    const status = await invoke('receipts-status-get', { path: '/api/receipts/status?id=r-1', headers: as(alice) });
    expect(status.json).toMatchObject({ status: 'failed', failureAction: expect.any(String) });
    // The buyer may start again after a failure; the failure fields are then null.
    expect((await report({ id: 'r-1', status: 'link_opened' })).json).toMatchObject({ status: 'link_opened', failureCode: null });
  });

  it('ends 50 concurrent updates in one consistent state with one event per real transition', async () => {
    const statuses = ['link_opened', 'buyer_logged_in', 'checkout_initialized', 'checkout_success'];
    const answers = await Promise.all(Array.from({ length: 50 }, (_, n) => report({ id: 'r-1', status: statuses[n % 4]! })));
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    const stored = (await deps.receipts.get(wallets.alice, 'r-1'))!.value;
    expect(stored.status).toBe('checkout_success');
    const events = queued().map((message) => JSON.parse(message.body) as { status: string; previousStatus: string });
    expect(events).toHaveLength(stored.statusHistory.length);
    expect(events.map((event) => event.status)).toEqual(stored.statusHistory.map((change) => change.status));
    for (let n = 1; n < events.length; n++) expect(events[n]!.previousStatus).toBe(events[n - 1]!.status);
    expect(answers.filter((answer) => !answer.json.ignored)).toHaveLength(events.length);
  });

  it('keeps events in the receipt when the queue is down, and the relay queues them later', async () => {
    const queue = deps.queue as MemoryEventQueue;
    const send = queue.send.bind(queue);
    queue.send = async () => Promise.reject(new Error('queue unreachable'));
    expect((await report({ id: 'r-1', status: 'link_opened' })).status).toBe(200);
    expect((await deps.receipts.get(wallets.alice, 'r-1'))!.value.pendingEvents).toHaveLength(1);
    queue.send = send;
    const { relayPendingEvents } = await import('../../shared/app/receipt-status');
    expect(await relayPendingEvents(deps)).toBe(1);
    expect(queued()).toHaveLength(1);
    expect((await deps.receipts.get(wallets.alice, 'r-1'))!.value.pendingEvents).toEqual([]);
  });
});
