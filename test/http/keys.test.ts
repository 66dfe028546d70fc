import { beforeEach, describe, expect, it } from 'vitest';
import type { AppDeps } from '../../shared/app/deps';
import { memoryDeps, setDeps } from '../../shared/composition';
import { invoke } from '../support/http';
import { signInAs, type SignedInBrowser } from '../support/session';
import { testWallets } from '../support/siwe';

let deps: AppDeps;
let merchant: SignedInBrowser;

beforeEach(async () => {
  deps = memoryDeps();
  setDeps(deps);
  merchant = await signInAs(testWallets.merchant);
});

const create = (headers: Record<string, string>, body: unknown) => invoke('keys-create', { method: 'POST', path: '/api/keys', headers, body });
const list = (headers: Record<string, string>) => invoke('keys-list', { path: '/api/keys', headers });

describe('API keys for a signed-in merchant', () => {
  it('creates a key shown once, which then works on the developer API with its scopes', async () => {
    const created = await create(merchant.headers(), { scopes: ['inventory:read'], plan: 'pro' });
    expect(created.status).toBe(201);
    expect(created.json).toEqual({
      ok: true,
      apiKey: expect.stringMatching(/^sk_/),
      key: { id: expect.stringMatching(/^sub_/), prefix: expect.any(String), scopes: ['inventory:read'], plan: 'pro', status: 'active', createdAt: expect.any(Number), lastUsedAt: null, revokedAt: null },
    });
    const key = created.json.key as { id: string };
    const read = await invoke('inventory-list', { path: '/api/inventory', headers: { 'x-subscription-id': key.id } });
    expect(read.status).toBe(200);
    const write = await invoke('inventory-upsert', { method: 'POST', path: '/api/inventory', headers: { 'x-subscription-id': key.id }, body: { sku: 'A', name: 'A', priceUsd: 1 } });
    expect(write.status).toBe(403);
  });

  it('lists the wallet’s keys without the key, with last use', async () => {
    const created = await create(merchant.headers(), { scopes: ['inventory:read', 'inventory:read'], plan: 'starter' });
    const id = (created.json.key as { id: string }).id;
    await invoke('inventory-list', { path: '/api/inventory', headers: { 'x-subscription-id': id } });
    await new Promise((resolve) => setTimeout(resolve, 10));
    const other = await signInAs(testWallets.other);
    await create(other.headers(), { scopes: ['orders:create'], plan: 'pro' });
    const listed = await list(merchant.headers());
    expect(listed.json.keys).toEqual([expect.objectContaining({ id, scopes: ['inventory:read'], lastUsedAt: expect.any(Number) })]);
    expect(JSON.stringify(listed.json)).not.toContain(created.json.apiKey as string);
  });

  it('revokes its own keys only: another wallet’s key is 404', async () => {
    const mine = (await create(merchant.headers(), { scopes: ['inventory:read'], plan: 'pro' })).json.key as { id: string };
    const other = await signInAs(testWallets.other);
    const stolen = await invoke('keys-revoke', { method: 'DELETE', path: `/api/keys/${mine.id}`, headers: other.headers() });
    expect(stolen).toMatchObject({ status: 404, json: { error: 'not_found' } });
    const revoked = await invoke('keys-revoke', { method: 'DELETE', path: `/api/keys/${mine.id}`, headers: merchant.headers() });
    expect(revoked).toMatchObject({ status: 200, json: { ok: true, id: mine.id } });
    expect(((await list(merchant.headers())).json.keys as Array<{ status: string }>)[0]!.status).toBe('revoked');
  });

  it.each([
    [{ scopes: [], plan: 'pro' }, 'scopes'],
    [{ scopes: ['inventory:admin'], plan: 'pro' }, 'scopes.0'],
    [{ scopes: ['inventory:read'], plan: 'gold' }, 'plan'],
    [{ scopes: ['inventory:read'] }, 'plan'],
  ])('answers 400 invalid_input for %j naming %s', async (body, field) => {
    expect(await create(merchant.headers(), body)).toMatchObject({ status: 400, json: { error: 'invalid_input', field } });
  });

  it('refuses the development plan outside a development stack', async () => {
    setDeps({ ...deps, settings: { ...deps.settings, development: false } });
    expect(await create(merchant.headers(), { scopes: ['inventory:read'], plan: 'development' })).toMatchObject({ status: 400, json: { field: 'plan' } });
  });

  it('needs a session (401) and, to create, the CSRF header (403)', async () => {
    expect((await list({})).status).toBe(401);
    const { 'x-csrf-token': _, ...noCsrf } = merchant.headers();
    expect((await create(noCsrf, { scopes: ['inventory:read'], plan: 'pro' })).status).toBe(403);
  });
});
