import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startTriggers, queueSettings, type Triggers } from '../../scripts/local/triggers';
import { startQueueServer, type QueueServer } from '../../scripts/local/servers';
import type { AppDeps } from '../../shared/app/deps';
import { compose, type Composition } from '../../shared/composition';
import { loadConfig } from '../../shared/config';
import { addMerchant, startHost, type Merchant, type RunningHost } from '../support/http';
import { startOutageProxy } from '../support/outage-proxy';
import { wallets } from '../support/stores';
import '../../scripts/local/functions';

/**
 * The store goes away in the middle: writes are accepted as degraded into the outbox, reads that
 * need the store answer 503, and when it is back every accepted write is there exactly once.
 */
let proxy: Awaited<ReturnType<typeof startOutageProxy>>;
let queueServer: QueueServer;
let composition: Composition;
let deps: AppDeps;
let host: RunningHost;
let triggers: Triggers;
let merchant: Merchant;

beforeAll(async () => {
  proxy = await startOutageProxy(inject('cosmosEndpoint'));
  queueServer = await startQueueServer();
  composition = compose(
    loadConfig({
      APP_ENV: 'development',
      COSMOS_ENDPOINT: proxy.url,
      COSMOS_KEY: inject('cosmosKey'),
      COSMOS_DATABASE: `degraded-${randomUUID()}`,
      AzureWebJobsStorage: queueServer.connectionString,
      STORE_AUTO_CREATE: 'true',
    }),
  );
  await composition.prepare();
  deps = composition.deps;
  host = await startHost(deps);
  triggers = startTriggers(composition.queues!, () => {}, { ...queueSettings, pollMs: 100 });
  merchant = await addMerchant(deps, wallets.alice);
});
afterAll(async () => {
  await triggers.stop();
  await host.close();
  composition.dispose();
  await queueServer.close();
});

const key = () => ({ 'x-api-key': merchant.apiKey });
const lines = [{ label: 'Bagel', priceUsd: 3 }];

describe('degraded mode', () => {
  it('accepts writes while the store is down and applies each exactly once when it returns', async () => {
    const original = await host.call('/api/inventory', { method: 'POST', headers: key(), body: { sku: 'KEEP', name: 'Kept', priceUsd: 1 } });
    const keptId = (original.json.item as { id: string }).id;
    expect((await host.call('/api/receipts', { method: 'POST', headers: key(), body: { id: 'before-1', lineItems: lines, totalUsd: 3 } })).status).toBe(201);
    expect((await host.call('/api/receipts', { headers: key() })).status).toBe(200);

    await proxy.down();
    const added = await host.call('/api/inventory', { method: 'POST', headers: key(), body: { sku: 'NEW', name: 'Added while down', priceUsd: 2 } });
    expect(added).toMatchObject({ status: 200, json: { ok: true, degraded: true, reason: 'store_unavailable', data: { ok: true, item: { sku: 'NEW', wallet: wallets.alice } } } });
    const updated = await host.call('/api/inventory', { method: 'POST', headers: key(), body: { id: keptId, sku: 'KEEP', name: 'Renamed while down', priceUsd: 1.5 } });
    expect(updated.json).toMatchObject({ degraded: true, data: { item: { id: keptId, name: 'Renamed while down' } } });
    const receipt = await host.call('/api/receipts', { method: 'POST', headers: key(), body: { id: 'during-1', lineItems: lines, totalUsd: 3 } });
    expect(receipt).toMatchObject({ status: 200, json: { degraded: true, data: { id: 'during-1', status: 'pending', paymentUrl: expect.stringContaining('/pay/during-1') } } });
    const clash = await host.call('/api/receipts', { method: 'POST', headers: key(), body: { id: 'before-1', lineItems: [{ label: 'Other', priceUsd: 5 }], totalUsd: 5 } });
    expect(clash.json).toMatchObject({ degraded: true });
    const status = await host.call('/api/receipts/status', { method: 'POST', headers: key(), body: { id: 'before-1', status: 'link_opened' } });
    expect(status.json).toMatchObject({ degraded: true, data: { receiptId: 'before-1', status: 'link_opened' } });

    expect(await host.call('/api/receipts/before-1', { headers: key() })).toMatchObject({ status: 503, json: { error: 'store_unavailable' } });
    expect((await host.call('/api/receipts', { headers: key() })).json).toMatchObject({ degraded: true, receipts: [{ receiptId: 'before-1' }] });
    const big = await host.call('/api/receipts', { method: 'POST', headers: key(), body: { id: 'big-1', lineItems: lines, totalUsd: 3, metadata: Object.fromEntries(Array.from({ length: 13 }, (_, n) => [`k${n}`, 'x'.repeat(4000)])) } });
    expect(big).toMatchObject({ status: 400, json: { field: 'metadata' } });
    expect((await host.call('/healthz')).json).toMatchObject({ status: 'degraded', checks: { store: 'down' } });

    await proxy.up();
    const until = Date.now() + 40_000;
    let items: Array<{ sku: string; name: string }> = [];
    let receipts: Array<{ receiptId: string; status: string }> = [];
    while (Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      const inventory = await host.call('/api/inventory?sort=sku&order=asc', { headers: key() });
      const listed = await host.call('/api/receipts', { headers: key() });
      if (inventory.status !== 200 || listed.json.degraded) continue;
      items = inventory.json.items as typeof items;
      receipts = listed.json.receipts as typeof receipts;
      // Every accepted write applied (the outbox applies them in any order).
      if (items.length === 2 && items.some((item) => item.name === 'Renamed while down') && receipts.length === 2 && receipts.some((r) => r.status === 'link_opened')) break;
    }
    expect(items.map((item) => [item.sku, item.name])).toEqual([['KEEP', 'Renamed while down'], ['NEW', 'Added while down']]);
    expect(receipts.map((r) => [r.receiptId, r.status]).sort()).toEqual([['before-1', 'link_opened'], ['during-1', 'pending']]);
    const rejected = await composition.queues!.queue('outbox-rejected').peekMessages({ numberOfMessages: 10 });
    const reasons = rejected.peekedMessageItems.map((item) => JSON.parse(Buffer.from(item.messageText, 'base64').toString('utf8')) as { reason: string; operation: { kind: string } });
    expect(reasons).toEqual([expect.objectContaining({ reason: expect.stringContaining('conflict'), operation: expect.objectContaining({ kind: 'receipt-create' }) })]);
  }, 60_000);
});
