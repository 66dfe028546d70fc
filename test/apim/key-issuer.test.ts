import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import type { AccessToken, TokenCredential } from '@azure/core-auth';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ApimKeyIssuer, KeyIssuerError, KeyIssuerUnavailableError } from '../../shared/adapters/apim/key-issuer';
import { localKeyIssuer } from '../../shared/adapters/apim/local-key-issuer';
import { apimProductOfPlan } from '../../shared/adapters/apim/products';
import { randomIds } from '../../shared/adapters/system/runtime';
import { DomainError } from '../../shared/domain/errors';
import type { Ids } from '../../shared/ports/runtime';

const AZ_SUB = '00000000-1111-2222-3333-444444444444';
const RG = 'rg-receipts';
const SVC = 'apim-receipts';
const TOKEN = 'static-test-token';
const SERVICE_PATH = `/subscriptions/${AZ_SUB}/resourceGroups/${RG}/providers/Microsoft.ApiManagement/service/${SVC}`;

/*
 * Azure core's bearer-token policy throws for any URL that is not https, whatever
 * `allowInsecureConnection` says, so the fake ARM endpoint speaks TLS. Its certificate is made here
 * with the openssl CLI and trusted through the client's own `tlsOptions.ca`: only this client trusts
 * it, and certificate checking stays on for everything else in the process (unlike
 * NODE_TLS_REJECT_UNAUTHORIZED, which would switch it off for every connection in the worker).
 */
let tls: { key: string; cert: string };
let certDir: string;
beforeAll(() => {
  certDir = mkdtempSync(join(tmpdir(), 'fake-arm-'));
  execFileSync(
    'openssl',
    [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
      '-keyout', join(certDir, 'key.pem'), '-out', join(certDir, 'cert.pem'),
      '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
  tls = { key: readFileSync(join(certDir, 'key.pem'), 'utf8'), cert: readFileSync(join(certDir, 'cert.pem'), 'utf8') };
});
afterAll(() => rmSync(certDir, { recursive: true, force: true }));

interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: any;
}

interface ApimSubscription {
  scope: string;
  displayName: string;
  state: string;
  primaryKey: string;
  secondaryKey: string;
}

interface ScriptedFailure {
  when: (request: RecordedRequest) => boolean;
  status: number;
  body: (request: RecordedRequest) => unknown;
}

const armError = (code: string, message: string, details?: unknown[]) => ({ error: { code, message, ...(details && { details }) } });

/**
 * Just the ARM calls the adapter makes, answering as ARM does: ARM-shaped JSON, ARM error bodies,
 * 401 without a bearer token, 400 without an api-version.
 */
const startFakeArm = async () => {
  const requests: RecordedRequest[] = [];
  const subscriptions = new Map<string, ApimSubscription>();
  const failures: ScriptedFailure[] = [];
  let requestNumber = 0;
  const route = new RegExp(`^${SERVICE_PATH.replace(/\./g, '\\.')}/subscriptions/([^/]+)(/listSecrets)?$`);

  const server: Server = createServer(tls, (req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (raw += chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'https://127.0.0.1');
      const request: RecordedRequest = {
        method: req.method ?? '',
        path: decodeURIComponent(url.pathname),
        query: url.searchParams,
        headers: req.headers,
        body: raw ? JSON.parse(raw) : undefined,
      };
      requests.push(request);
      const send = (status: number, body?: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(status, {
          'x-ms-request-id': `req-${++requestNumber}`,
          ...(body !== undefined && { 'content-type': 'application/json; charset=utf-8' }),
          ...headers,
        });
        res.end(body === undefined ? undefined : JSON.stringify(body));
      };

      if (req.headers.authorization !== `Bearer ${TOKEN}`) {
        return send(401, armError('AuthenticationFailed', 'Authentication failed. The Authorization header is missing.'));
      }
      if (!url.searchParams.get('api-version')) {
        return send(400, armError('MissingApiVersionParameter', "The api-version query parameter (?api-version=) is required for all requests."));
      }
      const failure = failures.find((f) => f.when(request));
      if (failure) return send(failure.status, failure.body(request));

      const match = route.exec(url.pathname);
      const sid = match?.[1] && decodeURIComponent(match[1]);
      if (!sid) return send(404, armError('InvalidResourceType', `no route for ${req.method} ${url.pathname}`));
      const existing = subscriptions.get(sid);
      const notFound = () => send(404, armError('ResourceNotFound', `Subscription not found.`));

      if (req.method === 'PUT' && !match?.[2]) {
        const properties = request.body?.properties ?? {};
        const stored: ApimSubscription = {
          scope: properties.scope,
          displayName: properties.displayName,
          state: properties.state ?? 'submitted',
          primaryKey: properties.primaryKey ?? 'apim-generated-primary',
          secondaryKey: properties.secondaryKey ?? 'apim-generated-secondary',
        };
        subscriptions.set(sid, stored);
        return send(
          existing ? 200 : 201,
          {
            id: `${SERVICE_PATH}/subscriptions/${sid}`,
            type: 'Microsoft.ApiManagement/service/subscriptions',
            name: sid,
            properties: {
              // ARM answers the scope as a full resource id and never the keys.
              scope: `${SERVICE_PATH}${stored.scope}`,
              displayName: stored.displayName,
              state: stored.state,
              createdDate: '2025-01-01T00:00:00.000Z',
              startDate: '2025-01-01T00:00:00.000Z',
              primaryKey: null,
              secondaryKey: null,
              allowTracing: false,
            },
          },
          { etag: '"AAAAAAAAAAE="' },
        );
      }
      if (req.method === 'POST' && match?.[2]) {
        if (!existing) return notFound();
        return send(200, { primaryKey: existing.primaryKey, secondaryKey: existing.secondaryKey }, { etag: '"AAAAAAAAAAE="' });
      }
      if (req.method === 'DELETE' && !match?.[2]) {
        if (req.headers['if-match'] === undefined) {
          return send(400, armError('InvalidRequest', "The 'If-Match' header is required."));
        }
        if (!existing) return notFound();
        subscriptions.delete(sid);
        return send(200);
      }
      return send(405, armError('MethodNotAllowed', `${req.method} is not supported here`));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `https://127.0.0.1:${port}`,
    requests,
    subscriptions,
    /** Every request that `when` matches is answered `status` with `body`, until the test ends. */
    fail: (when: ScriptedFailure['when'], status: number, body: ScriptedFailure['body']) => failures.push({ when, status, body }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};

/** Answers one fixed token, and remembers which audiences it was asked for. */
const staticCredential = (): TokenCredential & { scopesAsked: string[][] } => {
  const scopesAsked: string[][] = [];
  return {
    scopesAsked,
    getToken: async (scopes: string | string[]): Promise<AccessToken> => {
      scopesAsked.push(Array.isArray(scopes) ? scopes : [scopes]);
      return { token: TOKEN, expiresOnTimestamp: Date.now() + 3_600_000, tokenType: 'Bearer' };
    },
  };
};

const subscriptionPath = (sid: string) => `${SERVICE_PATH}/subscriptions/${sid}`;

describe('ApimKeyIssuer against a fake ARM endpoint', () => {
  let arm: Awaited<ReturnType<typeof startFakeArm>>;
  let credential: ReturnType<typeof staticCredential>;
  let issuer: ApimKeyIssuer;

  const makeIssuer = (endpoint: string) =>
    new ApimKeyIssuer({
      credential,
      subscriptionId: AZ_SUB,
      resourceGroup: RG,
      serviceName: SVC,
      endpoint,
      // One quick retry: enough to see that the SDK retries before a failure counts as unavailable.
      clientOptions: { retryOptions: { maxRetries: 1, retryDelayInMs: 5, maxRetryDelayInMs: 10 }, tlsOptions: { ca: tls.cert } },
    });

  beforeEach(async () => {
    arm = await startFakeArm();
    credential = staticCredential();
    issuer = makeIssuer(arm.endpoint);
  });
  afterEach(async () => {
    await arm.close();
  });

  const input = { subscriptionId: 'sub_abc123', plan: 'pro' as const, wallet: '0x1111111111111111111111111111111111111111', displayName: 'Shop backend' };

  it('creates the APIM subscription in the plan’s product, active, with a bearer token, and answers the key APIM holds', async () => {
    const { apiKey } = await issuer.issue(input);

    const [put, listSecrets, ...rest] = arm.requests;
    expect(rest).toEqual([]);
    expect(put).toMatchObject({ method: 'PUT', path: subscriptionPath('sub_abc123') });
    expect(put!.query.get('api-version')).toBe('2024-05-01');
    expect(put!.query.get('notify')).toBe('false');
    expect(put!.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(put!.body).toEqual({
      properties: {
        scope: '/products/plan-pro',
        displayName: 'Shop backend',
        state: 'active',
        primaryKey: expect.stringMatching(/^sk_[A-Za-z0-9_-]{43}$/),
        secondaryKey: expect.stringMatching(/^sk_[A-Za-z0-9_-]{43}$/),
      },
    });
    expect(put!.body.properties.secondaryKey).not.toBe(put!.body.properties.primaryKey);
    expect(listSecrets).toMatchObject({ method: 'POST', path: `${subscriptionPath('sub_abc123')}/listSecrets` });
    expect(listSecrets!.headers.authorization).toBe(`Bearer ${TOKEN}`);

    expect(apiKey).toBe(arm.subscriptions.get('sub_abc123')!.primaryKey);
    expect(apiKey).toBe(put!.body.properties.primaryKey);
    expect(credential.scopesAsked[0]).toEqual([`${arm.endpoint}/.default`]);
  });

  it.each([
    ['starter', 'plan-starter'],
    ['pro', 'plan-pro'],
    ['enterprise', 'plan-enterprise'],
  ] as const)('puts a %s key in the product %s', async (plan, product) => {
    await issuer.issue({ ...input, plan });
    expect(arm.subscriptions.get('sub_abc123')).toMatchObject({ scope: `/products/${product}`, state: 'active' });
  });

  it("never uses API Management's own starter or unlimited products, and has one product per plan", () => {
    const products = Object.values(apimProductOfPlan);
    expect(new Set(products).size).toBe(products.length);
    for (const product of products) expect(['starter', 'unlimited']).not.toContain(product);
  });

  it('makes a different key each time', async () => {
    const first = await issuer.issue({ ...input, subscriptionId: 'sub_one' });
    const second = await issuer.issue({ ...input, subscriptionId: 'sub_two' });
    expect(first.apiKey).not.toBe(second.apiKey);
  });

  it('refuses the development plan without calling ARM', async () => {
    const refused = await issuer.issue({ ...input, plan: 'development' }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(DomainError);
    expect(refused).toMatchObject({ code: 'invalid_input', details: { field: 'plan' } });
    expect((refused as Error).message).toMatch(/development.*starter, pro or enterprise/);
    expect(arm.requests).toEqual([]);
    expect(credential.scopesAsked).toEqual([]);
  });

  it('revokes with an unconditional DELETE, and a subscription that is not there is a no-op', async () => {
    await issuer.issue(input);
    await issuer.revoke('sub_abc123');
    expect(arm.subscriptions.has('sub_abc123')).toBe(false);
    await expect(issuer.revoke('sub_abc123')).resolves.toBeUndefined();

    const deletes = arm.requests.filter((r) => r.method === 'DELETE');
    expect(deletes).toHaveLength(2);
    for (const request of deletes) {
      expect(request.path).toBe(subscriptionPath('sub_abc123'));
      expect(request.headers['if-match']).toBe('*');
      expect(request.headers.authorization).toBe(`Bearer ${TOKEN}`);
      expect(request.query.get('api-version')).toBe('2024-05-01');
    }
  });

  it('turns an ARM 409 into a clear error carrying the ARM code, not an outage', async () => {
    arm.fail((r) => r.method === 'PUT', 409, () => armError('Conflict', 'Subscription with the same identifier already exists in a pending state.'));
    const error = await issuer.issue(input).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KeyIssuerError);
    expect(error).not.toBeInstanceOf(KeyIssuerUnavailableError);
    expect(error).toMatchObject({ status: 409, armCode: 'Conflict', requestId: 'req-1' });
    expect((error as Error).message).toBe(
      'API Management refused to create subscription sub_abc123: HTTP 409 Conflict: Subscription with the same identifier already exists in a pending state. (ARM request id req-1)',
    );
    // A refusal is final: no retry.
    expect(arm.requests.filter((r) => r.method === 'PUT')).toHaveLength(1);
  });

  it('reports a 400 ValidationError with its code and field, and never repeats the key even when ARM quotes it', async () => {
    arm.fail((r) => r.method === 'PUT', 400, (r) =>
      armError('ValidationError', `One or more fields contain incorrect values: '${r.body.properties.primaryKey}'`, [
        { code: 'ValidationError', target: 'primaryKey', message: `Key '${r.body.properties.primaryKey}' is not allowed; secondary '${r.body.properties.secondaryKey}'` },
      ]),
    );
    const error = await issuer.issue(input).catch((e: unknown) => e);
    const { primaryKey, secondaryKey } = arm.requests[0]!.body.properties as { primaryKey: string; secondaryKey: string };

    expect(error).toBeInstanceOf(KeyIssuerError);
    expect(error).toMatchObject({ status: 400, armCode: 'ValidationError' });
    const message = (error as Error).message;
    expect(message).toContain('HTTP 400 ValidationError');
    expect(message).toContain('primaryKey: ValidationError: Key');
    for (const key of [primaryKey, secondaryKey]) {
      expect(message).not.toContain(key);
      expect(inspect(error, { depth: 10 })).not.toContain(key);
      expect(String((error as Error).stack)).not.toContain(key);
    }
  });

  it('turns a 503 that outlasts the SDK’s retries into KeyIssuerUnavailableError', async () => {
    arm.fail((r) => r.method === 'PUT', 503, () => armError('ServiceUnavailable', 'The service is temporarily unavailable.'));
    const error = await issuer.issue(input).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KeyIssuerUnavailableError);
    expect(error).toMatchObject({ status: 503, armCode: 'ServiceUnavailable' });
    expect((error as Error).message).toMatch(/^API Management unavailable: create subscription sub_abc123: Azure Resource Manager answered HTTP 503 ServiceUnavailable/);
    expect(arm.requests.filter((r) => r.method === 'PUT')).toHaveLength(2);
    const primaryKey = arm.requests[0]!.body.properties.primaryKey as string;
    expect(inspect(error, { depth: 10 })).not.toContain(primaryKey);
  });

  it('undoes the created subscription when its key cannot be read, and reports the outage', async () => {
    arm.fail((r) => r.path.endsWith('/listSecrets'), 500, () => armError('InternalServerError', 'Something went wrong.'));
    const error = await issuer.issue(input).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KeyIssuerUnavailableError);
    expect((error as Error).message).toContain('read the key of subscription sub_abc123');
    expect(arm.requests.at(-1)).toMatchObject({ method: 'DELETE', path: subscriptionPath('sub_abc123') });
    expect(arm.subscriptions.has('sub_abc123')).toBe(false);
  });

  it('reports a failed revoke as unavailable on 5xx and as a refusal on 403', async () => {
    arm.fail((r) => r.method === 'DELETE' && r.path.endsWith('/sub_busy'), 502, () => armError('BadGateway', 'Upstream failed.'));
    arm.fail((r) => r.method === 'DELETE' && r.path.endsWith('/sub_locked'), 403, () =>
      armError('AuthorizationFailed', 'The client does not have authorization to perform action Microsoft.ApiManagement/service/subscriptions/delete.'),
    );
    await expect(issuer.revoke('sub_busy')).rejects.toBeInstanceOf(KeyIssuerUnavailableError);
    const refused = await issuer.revoke('sub_locked').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(KeyIssuerError);
    expect((refused as Error).message).toMatch(/^API Management refused to delete subscription sub_locked: HTTP 403 AuthorizationFailed: /);
  });

  it('reports an unreachable ARM endpoint as unavailable', async () => {
    // A port that was just free and is now closed: the connection is refused.
    const probe = createHttpServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as AddressInfo;
    await new Promise<void>((resolve) => probe.close(() => resolve()));

    const error = await makeIssuer(`https://127.0.0.1:${port}`).issue(input).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KeyIssuerUnavailableError);
    expect(error).toMatchObject({ status: undefined });
    expect((error as Error).message).toMatch(/^API Management unavailable: create subscription sub_abc123: could not reach Azure Resource Manager \(ECONNREFUSED\)/);
  });
});

describe('localKeyIssuer', () => {
  it('answers a fresh key from Ids and keeps nothing', async () => {
    const made: string[] = [];
    const ids: Ids = {
      random: () => 'unused',
      apiKey: () => {
        made.push(`sk_test_${made.length}`);
        return made.at(-1)!;
      },
    };
    const issuer = localKeyIssuer(ids);
    await expect(issuer.issue({ subscriptionId: 'sub_a', plan: 'development', wallet: '0x1111111111111111111111111111111111111111', displayName: 'demo' })).resolves.toEqual({ apiKey: 'sk_test_0' });
    await expect(issuer.issue({ subscriptionId: 'sub_b', plan: 'pro', wallet: '0x1111111111111111111111111111111111111111', displayName: 'demo' })).resolves.toEqual({ apiKey: 'sk_test_1' });
    await expect(issuer.revoke('sub_a')).resolves.toBeUndefined();
    await expect(issuer.revoke('sub_never_issued')).resolves.toBeUndefined();
  });

  it('with the runtime ids, makes keys in the service’s key shape', async () => {
    const { apiKey } = await localKeyIssuer(randomIds).issue({ subscriptionId: 'sub_a', plan: 'development', wallet: '0x1111111111111111111111111111111111111111', displayName: 'demo' });
    expect(apiKey).toMatch(/^sk_[A-Za-z0-9_-]{32}$/);
  });
});
