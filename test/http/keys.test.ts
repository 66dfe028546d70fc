import { beforeEach, describe, expect, it } from 'vitest';
import type { AppDeps } from '../../shared/app/deps';
import { memoryDeps, setDeps } from '../../shared/composition';
import { MAX_ACTIVE_KEYS, createApiKey } from '../../shared/app/api-keys';
import { updateMerchant } from '../../shared/app/merchants';
import type { WalletPlan } from '../../shared/domain/merchant';
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
    const created = await create(merchant.headers(), { scopes: ['inventory:read'] });
    expect(created.status).toBe(201);
    expect(created.json).toEqual({
      ok: true,
      apiKey: expect.stringMatching(/^sk_/),
      key: { id: expect.stringMatching(/^sub_/), prefix: expect.any(String), scopes: ['inventory:read'], plan: 'starter', status: 'active', createdAt: expect.any(Number), lastUsedAt: null, revokedAt: null },
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
    await create(other.headers(), { scopes: ['orders:create'] });
    const listed = await list(merchant.headers());
    expect(listed.json.keys).toEqual([expect.objectContaining({ id, scopes: ['inventory:read'], lastUsedAt: expect.any(Number) })]);
    expect(JSON.stringify(listed.json)).not.toContain(created.json.apiKey as string);
  });

  it('revokes its own keys only: another wallet’s key is 404', async () => {
    const mine = (await create(merchant.headers(), { scopes: ['inventory:read'] })).json.key as { id: string };
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
    expect((await create(noCsrf, { scopes: ['inventory:read'] })).status).toBe(403);
  });
});

describe('plans are paid for, not chosen', () => {
  const setPlan = (plan: WalletPlan | undefined) =>
    updateMerchant(deps, testWallets.merchant.address.toLowerCase(), (current) => ({ merchant: { ...current, plan }, result: undefined }));

  it('issues keys on the starter plan until the wallet has paid, and refuses a paid plan it has not bought (403)', async () => {
    for (const plan of ['pro', 'enterprise'] as const) {
      expect(await create(merchant.headers(), { scopes: ['inventory:read'], plan })).toMatchObject({ status: 403, json: { error: 'forbidden', currentPlan: 'starter' } });
    }
    expect((await create(merchant.headers(), { scopes: ['inventory:read'], plan: 'starter' })).json).toMatchObject({ key: { plan: 'starter' } });
    expect((await list(merchant.headers())).json.keys).toHaveLength(1);
  });

  it('issues keys on the plan the wallet paid for while its term runs, and on starter after', async () => {
    const now = Date.now();
    await setPlan({ name: 'pro', expiresAt: now + 60_000, source: 'x402' });
    expect((await create(merchant.headers(), { scopes: ['inventory:read'] })).json).toMatchObject({ key: { plan: 'pro' } });
    expect((await create(merchant.headers(), { scopes: ['inventory:read'], plan: 'pro' })).status).toBe(201);
    expect((await create(merchant.headers(), { scopes: ['inventory:read'], plan: 'enterprise' })).status).toBe(403);
    await setPlan({ name: 'pro', expiresAt: now - 1, source: 'x402' });
    expect((await create(merchant.headers(), { scopes: ['inventory:read'] })).json).toMatchObject({ key: { plan: 'starter' } });
    await setPlan({ name: 'enterprise', expiresAt: null, source: 'admin' });
    expect((await create(merchant.headers(), { scopes: ['inventory:read'] })).json).toMatchObject({ key: { plan: 'enterprise' } });
  });

  it('allows the development plan on a development stack only', async () => {
    expect((await create(merchant.headers(), { scopes: ['inventory:read'], plan: 'development' })).json).toMatchObject({ key: { plan: 'development' } });
  });

  it(`holds at most ${MAX_ACTIVE_KEYS} active keys per wallet (409 conflict); revoking one frees its place`, async () => {
    const ids: string[] = [];
    for (let i = 0; i < MAX_ACTIVE_KEYS; i++) ids.push(((await create(merchant.headers(), { scopes: ['inventory:read'] })).json.key as { id: string }).id);
    expect(await create(merchant.headers(), { scopes: ['inventory:read'] })).toMatchObject({ status: 409, json: { error: 'conflict', field: 'keys', limit: MAX_ACTIVE_KEYS } });
    await invoke('keys-revoke', { method: 'DELETE', path: `/api/keys/${ids[3]}`, headers: merchant.headers() });
    expect((await create(merchant.headers(), { scopes: ['inventory:read'] })).status).toBe(201);
    expect((await create(merchant.headers(), { scopes: ['inventory:read'] })).status).toBe(409);
    // Another wallet has its own places.
    const other = await signInAs(testWallets.other);
    expect((await create(other.headers(), { scopes: ['inventory:read'] })).status).toBe(201);
  });

  it('does not let concurrent requests pass the limit together', async () => {
    const answers = await Promise.all(Array.from({ length: 25 }, () => create(merchant.headers(), { scopes: ['inventory:read'] })));
    expect(answers.filter((answer) => answer.status === 201)).toHaveLength(MAX_ACTIVE_KEYS);
    expect(answers.filter((answer) => answer.status === 409)).toHaveLength(25 - MAX_ACTIVE_KEYS);
    const active = ((await list(merchant.headers())).json.keys as Array<{ status: string }>).filter((key) => key.status === 'active');
    expect(active).toHaveLength(MAX_ACTIVE_KEYS);
  });

  it('counts keys made before places were kept', async () => {
    const wallet = testWallets.merchant.address.toLowerCase();
    for (let i = 0; i < MAX_ACTIVE_KEYS - 1; i++) await createApiKey(deps, { wallet, scopes: ['inventory:read'], plan: 'starter', brand: 'default' });
    expect((await create(merchant.headers(), { scopes: ['inventory:read'] })).status).toBe(201);
    expect((await create(merchant.headers(), { scopes: ['inventory:read'] })).status).toBe(409);
  });
});
