import { HttpRequest, InvocationContext, type HttpResponseInit } from '@azure/functions';
import { beforeEach, describe, expect, it } from 'vitest';
import { sandboxOnramp } from '../../shared/adapters/onramp/sandbox';
import type { AppDeps } from '../../shared/app/deps';
import { memoryDeps, setDeps } from '../../shared/composition';
import { httpFunctions } from '../../shared/http/function';
import { Id } from '../../shared/domain/ids';
import { allRoutes, routes, type RouteSpec } from '../../shared/http/routes';
import { addMerchant, invoke } from '../support/http';
import { signInAs, type SignedInBrowser } from '../support/session';
import { storeSnapshot } from '../support/snapshot';

/**
 * Malformed ids at the HTTP edge, with the inputs a black-box fuzz run found answered 500 when the
 * id reached Cosmos: a body id is 400 invalid_input naming the field, a path id 404 not_found, and
 * neither gets to the store.
 */
let deps: AppDeps;
let merchant: SignedInBrowser;

beforeEach(async () => {
  const base = memoryDeps();
  const sandbox = sandboxOnramp({ baseUrl: base.settings.baseUrl, secret: 'ids-test', send: async () => {} });
  deps = memoryDeps({ onramp: sandbox.provider, onrampSandbox: sandbox.desk });
  setDeps(deps);
  merchant = await signInAs();
});

/** The handler as the Functions host calls it, with the route parameters as it decodes them (lone surrogates included). */
const call = async (route: RouteSpec, params: Record<string, string>, body?: string, headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' }) => {
  // A URL cannot carry a lone surrogate: the path has U+FFFD where the parameter has one.
  const path = route.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(params[name]!.replace(/[\uD800-\uDFFF]/g, '\uFFFD')));
  const response = (await httpFunctions.get(route.name)!.options.handler(
    new HttpRequest({ method: route.method, url: `http://localhost${path}`, headers, params, ...(body !== undefined && { body: { string: body } }) }),
    new InvocationContext({ functionName: route.name }),
  )) as HttpResponseInit;
  return { status: response.status, text: String(response.body) };
};

/** The reported bodies, written as the fuzzer sent them (`\ud800` escapes survive JSON.parse as lone surrogates). */
const badBodyIds = ['{"id":" "}', '{"id":"\\ud800\\ud800"}', '{"id":""}', '{"id":"a/b"}', `{"id":"${'x'.repeat(8_000)}"}`];

describe('POST /api/receipts/refund and its transaction report', () => {
  it.each(badBodyIds.map((body) => [body.slice(0, 30), body]))('answers %s with 400 invalid_input naming id, and changes nothing', async (_, body) => {
    for (const [name, path, extra] of [
      ['receipts-refund', '/api/receipts/refund', {}],
      ['receipts-refund-report', '/api/receipts/refund/transaction', { txHash: '0x' + 'a'.repeat(64) }],
    ] as const) {
      const before = storeSnapshot(deps);
      const text = Object.keys(extra).length > 0 ? `${body.slice(0, -1)},"txHash":"${extra.txHash}"}` : body;
      const answer = await invoke(name, { method: 'POST', path, headers: merchant.headers({ 'content-type': 'application/json' }), body: text });
      expect([answer.status, answer.json.error, answer.json.field], `${name} ${body.slice(0, 30)}`).toEqual([400, 'invalid_input', 'id']);
      expect(answer.json.message).toMatch(/^id: /);
      expect(storeSnapshot(deps)).toBe(before);
    }
  });

  it('still answers a well-formed unknown id 404 not_found', async () => {
    const answer = await invoke('receipts-refund', { method: 'POST', path: '/api/receipts/refund', headers: merchant.headers({ 'content-type': 'application/json' }), body: { id: 'R-UNKNOWN' } });
    expect([answer.status, answer.json.error]).toEqual([404, 'not_found']);
  });
});

describe('GET and POST /onramp/sandbox/{session}', () => {
  // What the Functions host hands the handler for `a%2Fb`, lone surrogates, 8,000 characters and the rest.
  const badSessions = ['a/b', '\uD800\uD800', 'x'.repeat(8_000), ' ', '..', 'a?b', 'a#b', 'a\\b', 'a%2Fb'];

  it.each(badSessions.map((session) => [JSON.stringify(session.slice(0, 12)), session]))('answers %s with the 404 not_found page, and changes nothing', async (_, session) => {
    for (const [route, body] of [
      [routes.onrampSandboxPage, undefined],
      [routes.onrampSandboxFinish, 'outcome=success'],
    ] as const) {
      const before = storeSnapshot(deps);
      const answer = await call(route, { session }, body);
      expect(answer.status, route.name).toBe(404);
      expect(answer.text).toContain('<code>not_found</code>');
      expect(answer.text).toContain('session: must be 1–64 of A–Z a–z 0–9 _ -');
      expect(storeSnapshot(deps)).toBe(before);
    }
  });

  it('answers a well-formed session no one opened with the same 404', async () => {
    for (const [route, body] of [
      [routes.onrampSandboxPage, undefined],
      [routes.onrampSandboxFinish, 'outcome=success'],
    ] as const) {
      const answer = await call(route, { session: 'sbx_000000000000000000000000' }, body);
      expect([answer.status, /<code>([a-z_]+)<\/code>/.exec(answer.text)?.[1]], route.name).toEqual([404, 'not_found']);
    }
  });
});

describe('the route table', () => {
  it('checks every path parameter that names a document with the id rule', () => {
    // Looked up in a fixed table, never in the store.
    const notDocuments = new Set(['page', 'file', 'provider']);
    // The buyer's page answers any unknown id, malformed or not, with its own "not found" page (its use case applies the rule).
    const ownNotFoundPage = new Set([routes.portalPage.name, routes.payPage.name]);
    for (const route of allRoutes) {
      for (const [, name] of route.path.matchAll(/\{(\w+)\}/g)) {
        if (notDocuments.has(name!) || ownNotFoundPage.has(route.name)) continue;
        expect((route.params as Record<string, unknown> | undefined)?.[name!], `${route.method} ${route.path} {${name}}`).toBe(Id);
      }
    }
  });

  it('answers a malformed path id 404 not_found on every route that checks it, after the caller and before the body', async () => {
    const key = await addMerchant(deps, merchant.answer.json.wallet as string);
    const checked = allRoutes.filter((route) => Object.keys(route.params ?? {}).length > 0);
    expect(checked.length).toBeGreaterThan(15);
    for (const route of checked) {
      const credentials = route.auth.kind === 'session' ? merchant.headers() : route.auth.kind === 'key' ? { 'x-subscription-id': key.subscriptionId } : {};
      for (const bad of ['\uD800\uD800', 'a/b', 'x'.repeat(8_000)]) {
        const params = Object.fromEntries([...route.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => [name!, bad]));
        const answer = await call(route, params, route.method === 'GET' ? undefined : 'not json', { ...credentials, 'content-type': 'application/json' });
        const code = route.responseKind === 'html' ? /<code>([a-z_]+)<\/code>/.exec(answer.text)?.[1] : (JSON.parse(answer.text) as { error: string }).error;
        expect([answer.status, code], `${route.name} ${JSON.stringify(bad.slice(0, 8))}`).toEqual([404, 'not_found']);
      }
      // Without the caller the route needs, the caller's answer comes first.
      if (route.auth.kind !== 'portal' && route.auth.kind !== 'public') expect((await call(route, { id: 'a/b', eventId: 'a/b' })).status, route.name).toBe(401);
    }
  });
});

describe('the buyer’s routes', () => {
  it('count no malformed receipt id against the per-receipt limit: 200 random long ids leave no counter behind', async () => {
    const counted: string[] = [];
    const limiter = deps.rateLimiter;
    setDeps({ ...deps, rateLimiter: { hit: (key, limit, now) => (counted.push(key), limiter.hit(key, limit, now)) } });
    for (let n = 0; n < 200; n++) {
      const answer = await call(routes.portalGet, { id: `${'z'.repeat(300)}${n}` }, undefined, {});
      expect(answer.status).toBe(404);
    }
    expect(counted.filter((key) => key.startsWith('portal:'))).toEqual([]);
    // A well-formed id is counted as before.
    await call(routes.portalGet, { id: 'R-WELLFORMED0001' }, undefined, {});
    expect(counted).toContain('portal:R-WELLFORMED0001');
  });
});
