import { beforeEach, describe, expect, it } from 'vitest';
import { createApiKey, findSubscriptionByKey, listApiKeys, revokeApiKey } from '../../shared/app/api-keys';
import type { AppDeps } from '../../shared/app/deps';
import { DomainError } from '../../shared/domain/errors';
import { hashApiKey } from '../../shared/app/hashing';
import { DuplicateKeyError } from '../../shared/ports/errors';
import { allStores, wallets } from '../support/stores';

describe.each(allStores)('subscriptions (API keys) on the $name store', (store) => {
  let deps: AppDeps;
  beforeEach(async () => {
    deps = await store.make();
  });

  it('stores only the key hash and finds the subscription by the clear key', async () => {
    const { subscription, apiKey } = await createApiKey(deps, { wallet: wallets.alice, scopes: ['inventory:read'], plan: 'pro', brand: 'default' });
    expect(apiKey).toMatch(/^sk_[A-Za-z0-9_-]{32}$/);
    expect(JSON.stringify(await deps.subscriptions.get(subscription.id))).not.toContain(apiKey);
    expect(await deps.subscriptions.findIdByKeyHash(hashApiKey(apiKey))).toBe(subscription.id);
    expect(await findSubscriptionByKey(deps, apiKey)).toMatchObject({ id: subscription.id, wallet: wallets.alice, scopes: ['inventory:read'], plan: 'pro', status: 'active' });
    expect(await findSubscriptionByKey(deps, `${apiKey}x`)).toBeUndefined();
  });

  it('refuses a second subscription with the same key hash', async () => {
    const { subscription } = await createApiKey(deps, { wallet: wallets.alice, scopes: [], plan: 'starter', brand: 'default' });
    await expect(deps.subscriptions.create({ ...subscription, id: 'sub_other' }, 'same-hash')).resolves.toBeUndefined();
    await expect(deps.subscriptions.create({ ...subscription, id: 'sub_third' }, 'same-hash')).rejects.toBeInstanceOf(DuplicateKeyError);
  });

  it('revokes: the key stops resolving, the record stays listed as revoked', async () => {
    const { subscription, apiKey } = await createApiKey(deps, { wallet: wallets.alice, scopes: ['inventory:read'], plan: 'pro', brand: 'default' });
    const revoked = await revokeApiKey(deps, subscription.id);
    expect(revoked).toMatchObject({ status: 'revoked', revokedAt: expect.any(Number) });
    expect(await findSubscriptionByKey(deps, apiKey)).toBeUndefined();
    expect((await listApiKeys(deps)).map((s) => [s.id, s.status])).toEqual([[subscription.id, 'revoked']]);
  });

  it('lists by wallet, and will not revoke another wallet’s key', async () => {
    const a = await createApiKey(deps, { wallet: wallets.alice, scopes: [], plan: 'pro', brand: 'default' });
    const b = await createApiKey(deps, { wallet: wallets.bob, scopes: [], plan: 'pro', brand: 'default' });
    expect((await listApiKeys(deps, { wallet: wallets.bob })).map((s) => s.id)).toEqual([b.subscription.id]);
    const refused = await revokeApiKey(deps, a.subscription.id, wallets.bob).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(DomainError);
    expect((refused as DomainError).code).toBe('not_found');
  });
});
