import { HttpRequest, InvocationContext, type HttpResponseInit } from '@azure/functions';
import { z } from 'zod';
import { beforeEach, describe, expect, it } from 'vitest';
import type { AppDeps } from '../../shared/app/deps';
import { memoryDeps, setDeps } from '../../shared/composition';
import { DomainError } from '../../shared/domain/errors';
import { escapeHtml } from '../../shared/domain/html';
import { httpFunction } from '../../shared/http/function';
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
const paid = httpFunction(paidRoute, async () => ({ ok: true as const }));

const call = async (options: typeof portal, path: string, params: Record<string, string>, method = 'GET') => {
  const response = (await options.handler(new HttpRequest({ method, url: `http://localhost${path}`, params }), new InvocationContext({ functionName: 'test', logHandler: () => {} }))) as HttpResponseInit;
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
  it('answer 503 service_unavailable, never run the use case, while no x402 gate is configured', async () => {
    const answer = await call(paid, '/api/test-x402', {}, 'POST');
    expect(answer.status).toBe(503);
    expect(JSON.parse(answer.body)).toMatchObject({ error: 'service_unavailable' });
  });
});

describe('escapeHtml', () => {
  it('turns every markup character into text', () => {
    expect(escapeHtml(`<script>alert("x")</script> & 'y' \`z\``)).toBe('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39; &#96;z&#96;');
    expect(escapeHtml(null)).toBe('');
  });
});
