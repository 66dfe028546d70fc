import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AppDeps } from '../../shared/app/deps';
import type { HttpFunction } from '../../shared/http/function';
import { addMerchant, startHost, type Merchant, type RunningHost } from '../support/http';
import { allStores, wallets } from '../support/stores';

describe.each(allStores)('the local host (gateway) on the $name store', (store) => {
  let deps: AppDeps;
  let host: RunningHost;
  let alice: Merchant;
  let bob: Merchant;
  const key = (merchant: Merchant) => ({ 'Ocp-Apim-Subscription-Key': merchant.apiKey });

  beforeEach(async () => {
    deps = await store.make();
    deps = { ...deps, settings: { ...deps.settings, edgeSecret: 'edge-s3cret' } };
    host = await startHost(deps);
    alice = await addMerchant(deps, wallets.alice);
    bob = await addMerchant(deps, wallets.bob);
    await host.call('/api/inventory', { method: 'POST', headers: key(bob), body: { sku: 'BOB-1', name: 'Bob only', priceUsd: 9 } });
  });
  afterEach(() => host.close());

  it('serves the inventory API end to end with a key', async () => {
    const created = await host.call('/api/inventory', { method: 'POST', headers: key(alice), body: { sku: 'A-1', name: 'Alpha', priceUsd: 4.2, tags: ['x'] } });
    expect(created).toMatchObject({ status: 200, json: { ok: true, item: { sku: 'A-1', wallet: wallets.alice } } });
    const id = (created.json.item as { id: string }).id;
    const listed = await host.call('/api/inventory?q=alp&tags=x', { headers: key(alice) });
    expect(listed.json).toMatchObject({ total: 1, page: 1, limit: 50, pages: 1, items: [{ id, name: 'Alpha' }] });
    expect(listed.headers['x-ratelimit-limit']).toBe('1000000');
    const deleted = await host.call(`/api/inventory?id=${id}`, { method: 'DELETE', headers: key(alice) });
    expect(deleted).toMatchObject({ status: 200, json: { ok: true, id } });
  });

  it('accepts x-api-key as an alias of Ocp-Apim-Subscription-Key', async () => {
    expect((await host.call('/api/inventory', { headers: { 'x-api-key': alice.apiKey } })).status).toBe(200);
  });

  it('answers 401 unauthorized for a missing or unknown key', async () => {
    for (const headers of [{}, { 'Ocp-Apim-Subscription-Key': 'sk_not-a-key' }] as Record<string, string>[]) {
      const answer = await host.call('/api/inventory', { headers });
      expect(answer).toMatchObject({ status: 401, json: { error: 'unauthorized' } });
    }
  });

  it('overwrites a client-sent x-subscription-id with the key’s own', async () => {
    const forged = await host.call('/api/inventory', { headers: { ...key(alice), 'x-subscription-id': bob.subscriptionId } });
    expect(forged.json.items).toEqual([]);
    const keyless = await host.call('/api/inventory', { headers: { 'x-subscription-id': bob.subscriptionId } });
    expect(keyless.status).toBe(401);
  });

  it('strips wallet headers and the wallet query parameter: a merchant sees only its own data', async () => {
    const answer = await host.call(`/api/inventory?wallet=${wallets.bob}`, {
      headers: { ...key(alice), 'x-wallet': wallets.bob, wallet: wallets.bob },
    });
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ items: [], total: 0 });
    const bobsItem = (await host.call('/api/inventory', { headers: key(bob) })).json.items as Array<{ id: string }>;
    const stolen = await host.call(`/api/inventory?id=${bobsItem[0]!.id}&wallet=${wallets.bob}`, {
      method: 'DELETE',
      headers: { ...key(alice), 'x-wallet': wallets.bob },
    });
    expect(stolen).toMatchObject({ status: 404, json: { error: 'not_found' } });
    expect((await host.call('/api/inventory', { headers: key(bob) })).json.total).toBe(1);
  });

  it('refuses a client-sent x-edge-secret unless it is the configured one', async () => {
    const wrong = await host.call('/api/inventory', { headers: { ...key(alice), 'x-edge-secret': 'guess' } });
    expect(wrong).toMatchObject({ status: 403, json: { error: 'forbidden' } });
    expect((await host.call('/healthz', { headers: { 'x-edge-secret': 'guess' } })).status).toBe(403);
    expect((await host.call('/api/inventory', { headers: { ...key(alice), 'x-edge-secret': 'edge-s3cret' } })).status).toBe(200);
  });

  it('answers 404 not_found for unknown routes, before checking the key', async () => {
    for (const [method, path] of [['GET', '/api/nothing'], ['GET', '/inventory'], ['PUT', '/api/inventory'], ['GET', '/api']]) {
      const answer = await host.call(path!, { method });
      expect(answer).toMatchObject({ status: 404, json: { error: 'not_found' } });
      expect(answer.headers['x-correlation-id']).toBeTruthy();
    }
  });

  it('answers 413 payload_too_large before the key check, declared or streamed', async () => {
    const big = JSON.stringify({ sku: 'A', name: 'A', priceUsd: 1, description: 'x'.repeat(300 * 1024) });
    expect(await host.call('/api/inventory', { method: 'POST', body: big })).toMatchObject({ status: 413, json: { error: 'payload_too_large' } });
    const chunked = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const request = httpRequest(`${host.url}/api/inventory`, { method: 'POST', headers: { 'transfer-encoding': 'chunked', ...key(alice) } }, (response) => {
        let body = '';
        response.on('data', (chunk) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      });
      request.on('error', reject);
      for (let n = 0; n < 40; n++) request.write('x'.repeat(8 * 1024));
      request.end();
    });
    expect(chunked.status).toBe(413);
    expect(JSON.parse(chunked.body)).toMatchObject({ error: 'payload_too_large' });
  });

  it('serves /healthz without a key and echoes the correlation id', async () => {
    const answer = await host.call('/healthz', { headers: { 'X-Correlation-Id': 'probe-1' } });
    expect(answer).toMatchObject({ status: 200, json: { status: 'ok', checks: { store: 'ok', queue: 'ok' } } });
    expect(answer.headers['x-correlation-id']).toBe('probe-1');
    expect(answer.headers['x-ratelimit-limit']).toBeUndefined();
  });
});

describe('the local host’s per-address limit on routes without a key', () => {
  it('answers 429 rate_limited with resetAt and Retry-After past the limit, and leaves keyed routes to their plan quota', async () => {
    const { memoryStore } = await import('../support/stores');
    let deps = await memoryStore.make();
    deps = { ...deps, settings: { ...deps.settings, keylessRateLimitPerMinute: 5 } };
    const host = await startHost(deps);
    try {
      const merchant = await addMerchant(deps, wallets.alice);
      const statuses: number[] = [];
      for (let i = 0; i < 7; i++) statuses.push((await host.call('/api/auth/nonce')).status);
      expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
      const limited = await host.call('/healthz');
      expect(limited).toMatchObject({ status: 429, json: { error: 'rate_limited', resetAt: expect.any(Number) } });
      expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(limited.headers['x-correlation-id']).toBeTruthy();
      expect((await host.call('/api/inventory', { headers: { 'x-api-key': merchant.apiKey } })).status).toBe(200);
    } finally {
      await host.close();
    }
  });
});

describe('the local host’s per-address limit on the x402 routes', () => {
  it('counts the x402 routes on a tighter counter of their own, besides the keyless one, and leaves other keyless routes to the keyless limit', async () => {
    const { createLocalHost } = await import('../../scripts/local/host');
    const { httpFunctions } = await import('../../shared/http/function');
    const { allRoutes } = await import('../../shared/http/routes');
    const { setDeps } = await import('../../shared/composition');
    const { memoryStore } = await import('../support/stores');
    let deps = await memoryStore.make();
    deps = { ...deps, settings: { ...deps.settings, keylessRateLimitPerMinute: 6, x402RateLimitPerMinute: 2 } };
    setDeps(deps);
    // The gateway's part only: the x402 routes answer a fixed 402 here, whatever their use cases do.
    const challenge: HttpFunction = { options: { handler: async () => ({ status: 402 }) }, call: async () => ({ status: 402, body: '{}', headers: { 'content-type': 'application/json' } }) };
    const functions = new Map([...httpFunctions, ['x402-orders', challenge], ['x402-subscribe', challenge]]);
    const server = createLocalHost({ deps, routes: allRoutes, functions });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const call = async (path: string, method = 'GET') => {
      const response = await fetch(`${url}${path}`, { method, ...(method === 'POST' && { headers: { 'content-type': 'application/json' }, body: '{}' }) });
      return { status: response.status, json: (await response.json()) as Record<string, unknown> };
    };
    try {
      const x402 = [await call('/api/x402/orders', 'POST'), await call('/api/x402/subscribe', 'POST'), await call('/api/x402/orders', 'POST')];
      expect(x402.map((answer) => answer.status)).toEqual([402, 402, 429]);
      expect(x402[2]!.json).toMatchObject({ error: 'rate_limited', resetAt: expect.any(Number) });
      // The refused x402 call still counted on the keyless counter: 3 of 6 spent.
      expect([await call('/api/auth/nonce'), await call('/api/auth/nonce'), await call('/api/auth/nonce'), await call('/api/auth/nonce')].map((answer) => answer.status)).toEqual([200, 200, 200, 429]);
    } finally {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    }
  });
});

describe('the client’s address (x-client-address, the gateway’s word)', () => {
  const headers = (values: Record<string, string>) => ({ get: (name: string) => values[name.toLowerCase()] ?? null });

  it('is the address the gateway set: X-Forwarded-For, the client’s own words and the front ends’, is not read', async () => {
    const { clientAddressOf } = await import('../../shared/http/incoming');
    expect(clientAddressOf(headers({ 'x-client-address': '203.0.113.9' }))).toBe('203.0.113.9');
    // An address with its port (as some front ends write it), and IPv6.
    expect(clientAddressOf(headers({ 'x-client-address': '203.0.113.9:51234' }))).toBe('203.0.113.9');
    expect(clientAddressOf(headers({ 'x-client-address': '2001:db8::7' }))).toBe('2001:db8::7');
    expect(clientAddressOf(headers({ 'x-forwarded-for': '6.6.6.6, 203.0.113.9' }))).toBeNull();
    for (const value of ['not-an-ip', '6.6.6.6, 7.7.7.7', '']) expect(clientAddressOf(headers({ 'x-client-address': value })), value).toBeNull();
  });

  it('is set by the local host, as API Management sets it: the TCP peer, whatever the client sent', async () => {
    const { createLocalHost } = await import('../../scripts/local/host');
    const { clientAddressOf } = await import('../../shared/http/incoming');
    const { httpFunctions } = await import('../../shared/http/function');
    const { allRoutes } = await import('../../shared/http/routes');
    const { setDeps } = await import('../../shared/composition');
    const { memoryStore } = await import('../support/stores');
    const deps = await memoryStore.make();
    setDeps(deps);
    // The gateway's part only: a public route answers the address its handler reads.
    const echo: HttpFunction = {
      options: { handler: async () => ({ status: 200 }) },
      call: async (request) => ({ status: 200, body: JSON.stringify({ address: clientAddressOf(request.headers) }), headers: { 'content-type': 'application/json' } }),
    };
    const server = createLocalHost({ deps, routes: allRoutes, functions: new Map([...httpFunctions, ['auth-nonce', echo]]) });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const call = async (sent: Record<string, string> = {}) => ((await (await fetch(`${url}/api/auth/nonce`, { headers: sent })).json()) as { address: string | null }).address;
    try {
      expect(await call()).toBe('127.0.0.1');
      expect(await call({ 'x-forwarded-for': '6.6.6.6' })).toBe('127.0.0.1');
      expect(await call({ 'x-client-address': '6.6.6.6', 'x-forwarded-for': '6.6.6.6, 7.7.7.7' })).toBe('127.0.0.1');
    } finally {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    }
  });
});

describe('the local host’s answers to requests node:http cannot parse', () => {
  const raw = async (url: string, text: string) => {
    const { hostname, port } = new URL(url);
    const { connect } = await import('node:net');
    return new Promise<{ status: number; headers: Record<string, string>; body: string }>((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => socket.write(text));
      let received = '';
      socket.on('data', (chunk) => (received += chunk.toString('latin1')));
      socket.on('error', reject);
      socket.on('close', () => {
        const [head = '', body = ''] = received.split('\r\n\r\n');
        const [statusLine = '', ...lines] = head.split('\r\n');
        const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
        resolve({ status: Number(statusLine.split(' ')[1]), headers, body });
      });
    });
  };

  it.each([
    ['a malformed request line', 'NOT HTTP AT ALL\r\n\r\n', 400, 'bad_request'],
    ['an encoded path', 'GET %2Fapi%2Finventory HTTP/1.1\r\nHost: localhost\r\n\r\n', 400, 'bad_request'],
    ['headers too large', `GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431, 'headers_too_large'],
    ['a URL too large', `GET /api/inventory?q=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: localhost\r\n\r\n`, 431, 'headers_too_large'],
    ['a bad header', 'GET /healthz HTTP/1.1\r\nHost: localhost\r\nBad Header: x\r\n\r\n', 400, 'bad_request'],
  ])('answers %s in the error shape with a correlation id', async (_, text, status, error) => {
    const { memoryStore } = await import('../support/stores');
    const host = await startHost(await memoryStore.make());
    try {
      const answer = await raw(host.url, text);
      expect(answer.status).toBe(status);
      expect(answer.headers['content-type']).toMatch(/^application\/json/);
      expect(answer.headers['x-correlation-id']).toMatch(/^[A-Za-z0-9._:-]{1,128}$/);
      expect(JSON.parse(answer.body)).toEqual({ error, message: expect.any(String) });
    } finally {
      await host.close();
    }
  });

  it('answers an encoded slash inside a path segment 404 not_found in the error shape', async () => {
    const { memoryStore } = await import('../support/stores');
    const host = await startHost(await memoryStore.make());
    try {
      expect(await host.call('/api%2Finventory')).toMatchObject({ status: 404, json: { error: 'not_found' } });
    } finally {
      await host.close();
    }
  });
});
