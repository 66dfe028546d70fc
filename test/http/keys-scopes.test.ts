import { beforeEach, describe, expect, it } from 'vitest';
import { memoryDeps, setDeps } from '../../shared/composition';
import { openApiDocument } from '../../shared/http/openapi';
import { routes } from '../../shared/http/routes';
import { parseScopeList, scopes } from '../../shared/domain/subscription';
import { invoke } from '../support/http';
import { signInAs, type SignedInBrowser } from '../support/session';
import { testWallets } from '../support/siwe';

let merchant: SignedInBrowser;

beforeEach(async () => {
  setDeps(memoryDeps());
  merchant = await signInAs(testWallets.merchant);
});

const create = (body: unknown) => invoke('keys-create', { method: 'POST', path: '/api/keys', headers: merchant.headers(), body });

describe('POST /api/keys scopes, as `npm run keys -- create --scopes` reads them', () => {
  it('takes ["all"] for every scope: the same list `--scopes all` gives', async () => {
    const created = await create({ scopes: ['all'], plan: 'starter' });
    expect(created.status).toBe(201);
    expect((created.json.key as { scopes: string[] }).scopes).toEqual([...scopes]);
    expect((created.json.key as { scopes: string[] }).scopes).toEqual(parseScopeList('all'));
    const id = (created.json.key as { id: string }).id;
    const order = await invoke('orders-create', { method: 'POST', path: '/api/orders', headers: { 'x-subscription-id': id }, body: { items: [{ sku: 'X', qty: 1 }] } });
    expect(order.json.error).toBe('split_required'); // past the scope check
  });

  it('takes a list of scopes, duplicates once, as the comma list does', async () => {
    const created = await create({ scopes: ['inventory:read', 'orders:create', 'inventory:read'], plan: 'starter' });
    expect((created.json.key as { scopes: string[] }).scopes).toEqual(parseScopeList('inventory:read,orders:create,inventory:read'));
  });

  it.each([
    [['all', 'inventory:read'], 'scopes'],
    [['everything'], 'scopes.0'],
    [['inventory:read', 'any'], 'scopes.1'],
    [[], 'scopes'],
  ])('refuses %j naming %s (the command line refuses it too)', async (list, field) => {
    expect(await create({ scopes: list, plan: 'starter' })).toMatchObject({ status: 400, json: { error: 'invalid_input', field } });
    expect(() => parseScopeList(list.join(','))).toThrow();
  });

  it('documents "all" with the scopes', () => {
    const document = openApiDocument([routes.keysCreate], { title: 'test', serverUrl: 'https://api.example.com' });
    const operation = document.paths['/api/keys']!.post as { requestBody: { content: Record<string, { schema: { properties: Record<string, unknown> } }> } };
    expect(operation.requestBody.content['application/json']!.schema.properties.scopes).toMatchObject({ type: 'array', minItems: 1, items: { enum: [...scopes, 'all'] } });
  });
});
