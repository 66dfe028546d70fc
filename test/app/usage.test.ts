import { describe, expect, it, vi } from 'vitest';
import { countKeyUse, usageInPeriod, USAGE_FLUSH_DELAY_MS } from '../../shared/app/usage';
import { usageCounterId } from '../../shared/domain/billing';
import { StoreUnavailableError } from '../../shared/ports/errors';
import { allStores } from '../support/stores';

const createdAt = Date.parse('2024-01-15T18:30:00Z');

describe.each(allStores)('request counts per key and billing period on the $name store', (store) => {
  it('counts every request, batched into the period’s counter document', async () => {
    const deps = await store.make();
    const key = { id: `sub-${Math.random().toString(36).slice(2)}`, createdAt };
    const at = Date.parse('2024-02-01T12:00:00Z');
    for (let i = 0; i < 25; i++) countKeyUse(deps, key, at);
    // Read at once: this instance's pending count is written first.
    expect(await usageInPeriod(deps, key, at)).toMatchObject({ requests: 25, period: { start: Date.parse('2024-01-15T00:00:00Z'), end: Date.parse('2024-02-15T00:00:00Z') } });
    const id = usageCounterId(key.id, { start: Date.parse('2024-01-15T00:00:00Z'), end: 0 });
    const stored = (await deps.claims.get(id, id))!.value;
    expect(stored).toMatchObject({ id, owner: key.id, count: 25 });
    expect(stored.expiresAt).toBe(Date.parse('2024-02-15T00:00:00Z') + 366 * 24 * 60 * 60 * 1000);
    // Left alone, the batch is written by itself shortly after.
    countKeyUse(deps, key, at);
    countKeyUse(deps, key, at);
    await new Promise((resolve) => setTimeout(resolve, USAGE_FLUSH_DELAY_MS));
    await vi.waitFor(async () => expect((await deps.claims.get(id, id))!.value.count).toBe(27), { timeout: 10_000, interval: 100 });
    // The next period starts from zero; the last one keeps its count.
    const next = Date.parse('2024-02-15T00:00:01Z');
    countKeyUse(deps, key, next);
    expect((await usageInPeriod(deps, key, next)).requests).toBe(1);
    expect((await usageInPeriod(deps, key, at)).requests).toBe(27);
  });

  it('adds concurrent batches without losing any (the counter is written under its ETag)', async () => {
    const deps = await store.make();
    const key = { id: `sub-${Math.random().toString(36).slice(2)}`, createdAt };
    const at = Date.parse('2024-03-01T00:00:00Z');
    await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        countKeyUse(deps, key, at);
        if (i % 3 === 0) await usageInPeriod(deps, key, at);
      }),
    );
    expect((await usageInPeriod(deps, key, at)).requests).toBe(20);
  });
});

describe('request counts when the store fails', () => {
  it('keeps a batch whose write failed and writes it with the next', async () => {
    const [store] = allStores;
    const deps = await store!.make();
    const key = { id: 'sub-failing', createdAt };
    const at = Date.parse('2024-03-01T00:00:00Z');
    let failures = 1;
    const claims = {
      ...deps.claims,
      get: deps.claims.get.bind(deps.claims),
      create: (partition: string, document: Parameters<typeof deps.claims.create>[1]) => {
        if (failures-- > 0) return Promise.reject(new StoreUnavailableError());
        return deps.claims.create(partition, document);
      },
      replace: deps.claims.replace.bind(deps.claims),
      upsert: deps.claims.upsert.bind(deps.claims),
      delete: deps.claims.delete.bind(deps.claims),
    };
    const flaky = { ...deps, claims };
    for (let i = 0; i < 3; i++) countKeyUse(flaky, key, at);
    await expect(usageInPeriod(flaky, key, at)).rejects.toBeInstanceOf(StoreUnavailableError);
    countKeyUse(flaky, key, at);
    expect((await usageInPeriod(flaky, key, at)).requests).toBe(4);
  });
});
