import { randomUUID } from 'node:crypto';
import { createServer, request as forward, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { toErrorResponse } from '../../shared/http/errors';
import { translateCosmosError } from '../../shared/adapters/cosmos/client';
import { StoreThrottledError } from '../../shared/ports/errors';
import { compose, setDeps, type Composition } from '../../shared/composition';
import { loadConfig } from '../../shared/config';
import { addMerchant, invoke, type Merchant } from '../support/http';
import { wallets } from '../support/stores';

/** An HTTP proxy in front of the Cosmos protocol server that can answer every request 429, as a throttled account does. */
const startThrottlingProxy = async (target: string) => {
  const upstream = new URL(target);
  let throttled = false;
  let refused = 0;
  const server: Server = createServer((incoming, outgoing) => {
    if (throttled) {
      refused++;
      incoming.resume();
      outgoing.writeHead(429, { 'content-type': 'application/json', 'x-ms-retry-after-ms': '20', 'x-ms-substatus': '3200' });
      outgoing.end(JSON.stringify({ code: 'TooManyRequests', message: 'Request rate is large' }));
      return;
    }
    const proxied = forward({ host: upstream.hostname, port: upstream.port, path: incoming.url, method: incoming.method, headers: incoming.headers }, (answer) => {
      outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(outgoing);
    });
    proxied.on('error', () => outgoing.destroy());
    incoming.pipe(proxied);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    throttle: (on: boolean) => void (throttled = on),
    refused: () => refused,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
};

let proxy: Awaited<ReturnType<typeof startThrottlingProxy>>;
let composition: Composition;
let merchant: Merchant;

beforeAll(async () => {
  proxy = await startThrottlingProxy(inject('cosmosEndpoint'));
  composition = compose(loadConfig({ APP_ENV: 'development', COSMOS_ENDPOINT: proxy.url, COSMOS_KEY: inject('cosmosKey'), COSMOS_DATABASE: `throttle-${randomUUID()}`, STORE_AUTO_CREATE: 'true' }));
  await composition.prepare();
  setDeps({ ...composition.deps, settings: { ...composition.deps.settings, subscriptionCacheMs: 60_000 } });
  merchant = await addMerchant(composition.deps, wallets.alice);
});

afterAll(async () => {
  composition?.dispose();
  await proxy?.close();
});

describe('a throttled store (Cosmos 429)', () => {
  it('maps the SDK’s 429 to a typed error with the wait it asked for', () => {
    const error = translateCosmosError(Object.assign(new Error('Request rate is large'), { code: 429, retryAfterInMs: 1_500 }));
    expect(error).toBeInstanceOf(StoreThrottledError);
    expect(toErrorResponse(error)).toMatchObject({ status: 503, body: { error: 'store_unavailable' }, headers: { 'retry-after': '2' } });
  });

  it('answers 503 store_unavailable with Retry-After once the SDK’s retries are spent — never 500, and a write is not taken as degraded', async () => {
    const headers = { 'x-subscription-id': merchant.subscriptionId };
    expect((await invoke('inventory-list', { path: '/api/inventory', headers })).status).toBe(200);
    proxy.throttle(true);
    try {
      const read = await invoke('inventory-list', { path: '/api/inventory', headers });
      expect(read).toMatchObject({ status: 503, json: { error: 'store_unavailable' } });
      expect(Number(read.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      const write = await invoke('inventory-upsert', { method: 'POST', path: '/api/inventory', headers, body: { sku: 'T-1', name: 'Tea', priceUsd: 2 } });
      expect(write).toMatchObject({ status: 503, json: { error: 'store_unavailable' } });
      expect(write.json.degraded).toBeUndefined();
      // The SDK retried before giving up.
      expect(proxy.refused()).toBeGreaterThan(2);
    } finally {
      proxy.throttle(false);
    }
    expect((await invoke('inventory-list', { path: '/api/inventory', headers })).json).toMatchObject({ items: [] });
  });
});
