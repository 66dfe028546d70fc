import { HttpRequest, InvocationContext, type HttpResponseInit } from '@azure/functions';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { z } from 'zod';
import { beforeEach, describe, expect, it } from 'vitest';
import type { AppDeps } from '../../shared/app/deps';
import { memoryDeps, setDeps } from '../../shared/composition';
import { requirePayment } from '../../shared/app/x402/gate';
import { DomainError } from '../../shared/domain/errors';
import { escapeHtml } from '../../shared/domain/html';
import { Reply, httpFunction } from '../../shared/http/function';
import type { RouteSpec } from '../../shared/http/routes';

/** Routes of the kinds the next features use, declared here as the route table will declare them. */
const portalRoute = {
  name: 'test-portal-view',
  method: 'GET',
  path: '/api/test-portal/{id}',
  auth: { kind: 'portal' },
  summary: 'a buyer view',
  response: z.object({ id: z.string() }),
  errors: ['not_found'],
} as const satisfies RouteSpec;

const pageRoute = {
  name: 'test-page',
  method: 'GET',
  path: '/test-page/{id}',
  auth: { kind: 'portal' },
  responseKind: 'html',
  summary: 'a page',
  response: z.string(),
  errors: ['not_found'],
} as const satisfies RouteSpec;

const paidRoute = {
  name: 'test-x402',
  method: 'POST',
  path: '/api/test-x402',
  auth: { kind: 'x402' },
  summary: 'a paid call',
  response: z.object({ ok: z.literal(true) }),
  errors: [],
} as const satisfies RouteSpec;

const portal = httpFunction(portalRoute, async ({ params }) => ({ id: params.id }));
const page = httpFunction(pageRoute, async ({ params }) => {
  if (params.id === 'missing') throw new DomainError('not_found', `receipt <${params.id}> not found`);
  return `<!doctype html><p>${escapeHtml(params.id)}</p>`;
});
/** The gated use case: counts the calls it let through. */
let paidRuns = 0;
const paid = httpFunction(paidRoute, async ({ deps, headers }) => {
  const gate = await requirePayment(deps, headers, { resource: 'http://localhost/api/test-x402', description: 'a paid call', payTo: '0x' + '11'.repeat(20), amount: 10_000n });
  if (gate.kind !== 'paid') return new Reply(gate.reply.status, gate.reply.body as never, [], gate.reply.headers);
  paidRuns++;
  return { ok: true as const };
});

const call = async (options: typeof portal, path: string, params: Record<string, string>, method = 'GET', headers: Record<string, string> = {}) => {
  const response = (await options.handler(new HttpRequest({ method, url: `http://localhost${path}`, params, headers }), new InvocationContext({ functionName: 'test', logHandler: () => {} }))) as HttpResponseInit;
  return { status: response.status ?? 200, headers: response.headers as Record<string, string>, body: String(response.body) };
};

let deps: AppDeps;
beforeEach(() => {
  deps = memoryDeps();
  deps = { ...deps, settings: { ...deps.settings, portalRateLimitPerMinute: 3, frameAncestors: "'self' https://shop.example" } };
  setDeps(deps);
});

describe('portal routes', () => {
  it('are public and limited per receipt: one busy receipt does not limit another', async () => {
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await call(portal, '/api/test-portal/R-A', { id: 'R-A' })).status);
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    const limited = await call(portal, '/api/test-portal/R-A', { id: 'R-A' });
    expect(JSON.parse(limited.body)).toMatchObject({ error: 'rate_limited', resetAt: expect.any(Number) });
    expect(limited.headers['retry-after']).toBeTruthy();
    expect(await call(portal, '/api/test-portal/R-B', { id: 'R-B' })).toMatchObject({ status: 200, body: '{"id":"R-B"}' });
  });
});

describe('page routes (html)', () => {
  it('answer markup with the page security headers', async () => {
    const answer = await call(page, '/test-page/R-1', { id: 'R-1' });
    expect(answer.status).toBe(200);
    expect(answer.body).toContain('<p>R-1</p>');
    expect(answer.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(answer.headers['content-security-policy']).toContain("script-src 'self'");
    expect(answer.headers['content-security-policy']).not.toContain('unsafe-inline');
    expect(answer.headers['content-security-policy']).toContain("frame-ancestors 'self' https://shop.example");
    expect(answer.headers).toMatchObject({ 'referrer-policy': 'no-referrer', 'x-content-type-options': 'nosniff' });
    expect(answer.headers['x-correlation-id']).toBeTruthy();
  });

  it('answer an error as a page (a 404 is a page, not JSON), with the message escaped', async () => {
    const answer = await call(page, '/test-page/missing', { id: 'missing' });
    expect(answer.status).toBe(404);
    expect(answer.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(answer.body).toContain('<h1>Not found</h1>');
    expect(answer.body).toContain('receipt &lt;missing&gt; not found');
    expect(answer.body).not.toContain('<missing>');
  });
});

describe('x402 routes', () => {
  const usdc = '0x' + 'c0'.repeat(20);
  /** A deployment that takes USDC (its EIP-712 domain as the token would answer it). */
  const payable = () => {
    setDeps({
      ...deps,
      settings: { ...deps.settings, tokens: [{ symbol: 'USDC', address: usdc, decimals: 6 }] },
      x402: { ...deps.x402, tokenDomain: async () => ({ name: 'USD Coin', version: '2' }) },
    });
  };

  it('let the call through to its use case, which answers the challenge without a payment: 402, v1 body and v2 header', async () => {
    payable();
    paidRuns = 0;
    const answer = await call(paid, '/api/test-x402', {}, 'POST');
    expect(answer.status).toBe(402);
    expect(JSON.parse(answer.body)).toMatchObject({
      x402Version: 1,
      error: 'payment_required',
      accepts: [{ scheme: 'exact', network: 'eip155:31337', maxAmountRequired: '10000', resource: 'http://localhost/api/test-x402', asset: usdc, payTo: '0x' + '11'.repeat(20), extra: { name: 'USD Coin', version: '2' } }],
    });
    expect(decodePaymentRequiredHeader(answer.headers['PAYMENT-REQUIRED']!)).toMatchObject({
      x402Version: 2,
      resource: { url: 'http://localhost/api/test-x402' },
      accepts: [{ scheme: 'exact', network: 'eip155:31337', amount: '10000', asset: usdc }],
    });
    expect(paidRuns).toBe(0);
  });

  it('answer a malformed payment header 402 invalid_payment_header, never the work', async () => {
    payable();
    paidRuns = 0;
    for (const header of ['not base64!', Buffer.from('{"x402Version":2}').toString('base64'), Buffer.from('[]').toString('base64')]) {
      const answer = await call(paid, '/api/test-x402', {}, 'POST', { 'payment-signature': header });
      expect(answer.status).toBe(402);
      expect(JSON.parse(answer.body)).toMatchObject({ error: 'invalid_payment_header' });
    }
    expect(paidRuns).toBe(0);
  });

  it('answer 503 service_unavailable, never the work, where the deployment takes no USDC', async () => {
    paidRuns = 0;
    const answer = await call(paid, '/api/test-x402', {}, 'POST');
    expect(answer.status).toBe(503);
    expect(JSON.parse(answer.body)).toMatchObject({ error: 'service_unavailable' });
    expect(paidRuns).toBe(0);
  });
});

describe('escapeHtml', () => {
  it('turns every markup character into text', () => {
    expect(escapeHtml(`<script>alert("x")</script> & 'y' \`z\``)).toBe('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39; &#96;z&#96;');
    expect(escapeHtml(null)).toBe('');
  });
});
