import { describe, expect, it } from 'vitest';
import { withTtl } from '../../shared/adapters/cosmos/documents';
import { allContainers } from '../../shared/registry';
import { allStores } from '../support/stores';

describe('temporary records', () => {
  it('gives a document with expiresAt a Cosmos ttl a day past its expiry, and leaves others alone', () => {
    const now = 1_000_000;
    expect(withTtl({ id: 'a', expiresAt: now + 300_000 }, now)).toEqual({ id: 'a', expiresAt: now + 300_000, ttl: 300 + 86_400 });
    expect(withTtl({ id: 'b', expiresAt: now - 10_000_000 }, now)).toMatchObject({ ttl: 76_400 });
    expect(withTtl({ id: 'c', expiresAt: now - 1_000_000_000 }, now)).toMatchObject({ ttl: 1 });
    expect(withTtl({ id: 'd', createdAt: now }, now)).toEqual({ id: 'd', createdAt: now });
  });

  it('keeps TTL on for exactly the containers of temporary records (claims, sessions)', () => {
    expect(allContainers.filter((spec) => 'expiring' in spec).map((spec) => spec.name).sort()).toEqual(['claims', 'sessions']);
  });

  describe.each(allStores)('on the $name store', (store) => {
    it('reads an expiring claim back exactly as written (no ttl field leaks into the value)', async () => {
      const deps = await store.make();
      const claim = { id: 'siwe-nonce-used:x', owner: 'siwe', createdAt: 1, expiresAt: Date.now() + 60_000 };
      await deps.claims.create(claim.id, claim);
      expect((await deps.claims.get(claim.id, claim.id))?.value).toEqual(claim);
    });
  });
});
