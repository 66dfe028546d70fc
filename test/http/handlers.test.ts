import { beforeEach, describe, expect, it } from 'vitest';
import type { AppDeps } from '../../shared/app/deps';
import { revokeApiKey } from '../../shared/app/api-keys';
import { memoryDeps } from '../../shared/composition';
import { setDeps } from '../../shared/composition';
import { addMerchant, invoke, type Merchant } from '../support/http';
import { wallets } from '../support/stores';
import { tickingClock } from '../support/fixtures';

let deps: AppDeps;
let alice: Merchant;
const as = (merchant: Merchant) => ({ 'x-subscription-id': merchant.subscriptionId });
const upsert = (merchant: Merchant, body: unknown) => invoke('inventory-upsert', { method: 'POST', path: '/api/inventory', headers: as(merchant), body });

beforeEach(async () => {
  deps = memoryDeps({ clock: tickingClock() });
  setDeps(deps);
  alice = await addMerchant(deps, wallets.alice);
});

describe('identity from the gateway stamp', () => {
  it('answers 401 unauthorized without a stamped subscription, or with an unknown or revoked one', async () => {
    for (const headers of [{}, { 'x-subscription-id': 'sub_nope' }] as Record<string, string>[]) {
      const answer = await invoke('inventory-list', { path: '/api/inventory', headers });
      expect(answer.status).toBe(401);
      expect(answer.json).toEqual({ error: 'unauthorized', message: expect.any(String) });
    }
    await revokeApiKey(deps, alice.subscriptionId);
    setDeps((deps = { ...deps, settings: { ...deps.settings, subscriptionCacheMs: 0 } }));
    expect((await invoke('inventory-list', { path: '/api/inventory', headers: as(alice) })).status).toBe(401);
  });

  it('answers 403 forbidden for a key without the route’s scope', async () => {
    const reader = await addMerchant(deps, wallets.bob, { scopes: ['inventory:read'] });
    const answer = await upsert(reader, { sku: 'A', name: 'A', priceUsd: 1 });
    expect(answer.status).toBe(403);
    expect(answer.json).toMatchObject({ error: 'forbidden', message: expect.stringContaining('inventory:write') });
    expect((await invoke('inventory-list', { path: '/api/inventory', headers: as(reader) })).status).toBe(200);
  });

  it('never reads a wallet from the client: wallet query and headers are ignored', async () => {
    const bob = await addMerchant(deps, wallets.bob);
    await upsert(bob, { sku: 'BOB-ONLY', name: 'Bob item', priceUsd: 3 });
    const answer = await invoke('inventory-list', {
      path: `/api/inventory?wallet=${wallets.bob}`,
      headers: { ...as(alice), 'x-wallet': wallets.bob, wallet: wallets.bob },
    });
    expect(answer.status).toBe(200);
    expect(answer.json.items).toEqual([]);
    const created = await invoke('inventory-upsert', {
      method: 'POST',
      path: '/api/inventory',
      headers: { ...as(alice), 'x-wallet': wallets.bob },
      body: { sku: 'X', name: 'X', priceUsd: 1, wallet: wallets.bob },
    });
    expect(created.json.item).toMatchObject({ wallet: wallets.alice });
  });
});

describe('rate limits per subscription and plan', () => {
  it('sends X-RateLimit headers and answers 429 rate_limited with resetAt past the quota', async () => {
    setDeps((deps = { ...deps, settings: { ...deps.settings, planQuotas: { ...deps.settings.planQuotas, starter: 3 } } }));
    const starter = await addMerchant(deps, wallets.bob, { plan: 'starter' });
    const answers = [];
    for (let n = 0; n < 4; n++) answers.push(await invoke('inventory-list', { path: '/api/inventory', headers: as(starter) }));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 429]);
    expect(answers.map((answer) => answer.headers['x-ratelimit-remaining'])).toEqual(['2', '1', '0', '0']);
    expect(answers[0]!.headers['x-ratelimit-limit']).toBe('3');
    const reset = Number(answers[0]!.headers['x-ratelimit-reset']);
    expect(reset % 60_000).toBe(0);
    expect(answers[3]!.json).toEqual({ error: 'rate_limited', message: expect.any(String), resetAt: reset });
    // Another subscription has its own quota.
    expect((await invoke('inventory-list', { path: '/api/inventory', headers: as(alice) })).status).toBe(200);
  });

  it('checks scope (403) before the rate limit (429), and the key (401) before input (400)', async () => {
    setDeps((deps = { ...deps, settings: { ...deps.settings, planQuotas: { ...deps.settings.planQuotas, starter: 1 } } }));
    const reader = await addMerchant(deps, wallets.bob, { scopes: ['inventory:read'], plan: 'starter' });
    await invoke('inventory-list', { path: '/api/inventory', headers: as(reader) });
    expect((await upsert(reader, { sku: 'A' })).status).toBe(403);
    expect((await invoke('inventory-list', { path: '/api/inventory?limit=0', headers: as(reader) })).status).toBe(429);
    expect((await invoke('inventory-list', { path: '/api/inventory?limit=0' })).status).toBe(401);
  });
});

describe('input errors name the field', () => {
  it.each([
    ['sort=price', 'sort'],
    ['order=up', 'order'],
    ['limit=0', 'limit'],
    ['limit=201', 'limit'],
    ['limit=2.5', 'limit'],
    ['page=0', 'page'],
    ['page=abc', 'page'],
    ['priceMin=abc', 'priceMin'],
    ['priceMax=-1', 'priceMax'],
    ['priceMin=5&priceMax=4', 'priceMin'],
    ['taxable=yes', 'taxable'],
    ['stock=some', 'stock'],
    ['tagsMode=none', 'tagsMode'],
    ['limit=200&page=51', 'page'],
  ])('GET /api/inventory?%s → 400 invalid_input naming %s', async (query, field) => {
    const answer = await invoke('inventory-list', { path: `/api/inventory?${query}`, headers: as(alice) });
    expect(answer.status).toBe(400);
    expect(answer.json).toMatchObject({ error: 'invalid_input', field });
    expect(answer.json.message).toMatch(new RegExp(`^${field}: `));
  });

  it('accepts the largest page window (page × limit = 10,000)', async () => {
    expect((await invoke('inventory-list', { path: '/api/inventory?limit=200&page=50', headers: as(alice) })).status).toBe(200);
  });

  it.each([
    [{ name: 'A', priceUsd: 1 }, 'sku'],
    [{ sku: 'A', priceUsd: 1 }, 'name'],
    [{ sku: 'A', name: 'A' }, 'priceUsd'],
    [{ sku: 'A', name: 'A', priceUsd: 'abc' }, 'priceUsd'],
    [{ sku: 'A', name: 'A', priceUsd: -1 }, 'priceUsd'],
    [{ sku: 'A', name: 'A', priceUsd: 1.005 }, 'priceUsd'],
    [{ sku: 'A', name: 'A', priceUsd: 1, stockQty: -2 }, 'stockQty'],
    [{ sku: 'A', name: 'A', priceUsd: 1, stockQty: 1.5 }, 'stockQty'],
    [{ sku: 'A', name: 'A', priceUsd: 1, taxable: 'yes' }, 'taxable'],
    [{ sku: 'A', name: 'A', priceUsd: 1, tags: 'a,b' }, 'tags'],
    [{ sku: 'A', name: 'A', priceUsd: 1, tags: ['ok', 7] }, 'tags.1'],
    [{ sku: '   ', name: 'A', priceUsd: 1 }, 'sku'],
    [[1, 2], 'body'],
  ])('POST /api/inventory %j → 400 invalid_input naming %s', async (body, field) => {
    const answer = await upsert(alice, body);
    expect(answer.status).toBe(400);
    expect(answer.json).toMatchObject({ error: 'invalid_input', field });
  });

  it('answers 400 invalid_input for malformed JSON and for a missing body', async () => {
    for (const body of ['{"sku": "A",', '']) {
      const answer = await upsert(alice, body);
      expect(answer.status).toBe(400);
      expect(answer.json).toMatchObject({ error: 'invalid_input', field: 'body' });
    }
  });

  it('accepts boundary values: price 0, stockQty -1, two decimals', async () => {
    const answer = await upsert(alice, { sku: 'FREE', name: 'Sample', priceUsd: 0, stockQty: -1 });
    expect(answer.status).toBe(200);
    expect((await upsert(alice, { sku: 'C', name: 'C', priceUsd: 19.99 })).json.item).toMatchObject({ priceUsd: 19.99 });
  });

  it('answers DELETE without id with 400 id_required, and an unknown id with 404 not_found', async () => {
    const missing = await invoke('inventory-delete', { method: 'DELETE', path: '/api/inventory', headers: as(alice) });
    expect(missing).toMatchObject({ status: 400, json: { error: 'id_required' } });
    const unknown = await invoke('inventory-delete', { method: 'DELETE', path: '/api/inventory?id=itm_x', headers: as(alice) });
    expect(unknown).toMatchObject({ status: 404, json: { error: 'not_found' } });
    const malformed = await invoke('inventory-delete', { method: 'DELETE', path: '/api/inventory?id=a/b', headers: as(alice) });
    expect(malformed).toMatchObject({ status: 400, json: { error: 'invalid_input', field: 'id' } });
  });

  it('answers 409 conflict when an update takes another item’s sku, and 404 for an unknown id', async () => {
    await upsert(alice, { sku: 'A', name: 'A', priceUsd: 1 });
    const b = (await upsert(alice, { sku: 'B', name: 'B', priceUsd: 1 })).json.item as { id: string };
    expect(await upsert(alice, { id: b.id, sku: 'A', name: 'B', priceUsd: 1 })).toMatchObject({ status: 409, json: { error: 'conflict' } });
    expect(await upsert(alice, { id: 'itm_none', sku: 'Q', name: 'Q', priceUsd: 1 })).toMatchObject({ status: 404, json: { error: 'not_found' } });
  });
});

describe('body size, unexpected failures and correlation ids', () => {
  it('answers 413 payload_too_large over 256 KiB, before checking the key', async () => {
    const big = JSON.stringify({ sku: 'A', name: 'A', priceUsd: 1, description: 'x'.repeat(256 * 1024) });
    const answer = await invoke('inventory-upsert', { method: 'POST', path: '/api/inventory', body: big });
    expect(answer).toMatchObject({ status: 413, json: { error: 'payload_too_large' } });
  });

  it('answers 500 internal_error without leaking the cause', async () => {
    setDeps({
      ...deps,
      inventory: { ...deps.inventory, list: async () => Promise.reject(new Error('cosmos secret at 10.0.0.7')) },
    });
    const answer = await invoke('inventory-list', { path: '/api/inventory', headers: as(alice) });
    expect(answer.status).toBe(500);
    expect(answer.json).toEqual({ error: 'internal_error', message: 'an unexpected error occurred' });
  });

  it('echoes a well-formed X-Correlation-Id and makes one otherwise', async () => {
    const echoed = await invoke('healthz', { path: '/healthz', headers: { 'x-correlation-id': 'order-42.retry:1' } });
    expect(echoed.headers['x-correlation-id']).toBe('order-42.retry:1');
    const made = await invoke('healthz', { path: '/healthz', headers: { 'x-correlation-id': 'bad id <script>' } });
    expect(made.headers['x-correlation-id']).toMatch(/^[0-9a-f-]{36}$/);
    const error = await invoke('inventory-list', { path: '/api/inventory' });
    expect(error.headers['x-correlation-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(error.headers['content-type']).toMatch(/^application\/json/);
  });
});

describe('health', () => {
  it('answers ok with version and checks, and degraded (still 200) when a dependency is down', async () => {
    const ok = await invoke('healthz', { path: '/healthz' });
    expect(ok).toMatchObject({ status: 200, json: { status: 'ok', version: expect.any(String), checks: { store: 'ok', queue: 'ok' } } });
    setDeps(
      memoryDeps({
        probes: { store: { ping: async () => Promise.reject(new Error('down')) }, queue: { ping: async () => {} } },
      }),
    );
    const degraded = await invoke('healthz', { path: '/healthz' });
    expect(degraded).toMatchObject({ status: 200, json: { status: 'degraded', checks: { store: 'down', queue: 'ok' } } });
  });
});
