import { describe, expect, it } from 'vitest';
import { BoundedCache } from '../../shared/app/bounded-cache';
import { createReceipt, listReceipts, listingCacheUsage } from '../../shared/app/receipts';
import { memoryDeps } from '../../shared/composition';
import { encodeCursor } from '../../shared/domain/cursor';
import { tickingClock } from '../support/fixtures';
import { wallets } from '../support/stores';

const sized = (maxEntries: number, maxBytes: number) => new BoundedCache<string>({ maxEntries, maxBytes, sizeOf: (value) => value.length });

describe('BoundedCache', () => {
  it('keeps at most maxEntries, dropping the least recently used', () => {
    const cache = sized(2, 1_000);
    cache.set('a', 'A', 1);
    cache.set('b', 'B', 2);
    expect(cache.get('a')).toEqual({ value: 'A', at: 1 }); // a is now the most recent
    cache.set('c', 'C', 3);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')?.value).toBe('A');
    expect(cache.get('c')?.value).toBe('C');
    expect(cache.size).toBe(2);
  });

  it('keeps at most maxBytes (keys counted), however few the entries', () => {
    const cache = sized(1_000, 100);
    for (let i = 0; i < 50; i++) cache.set(`k${i}`, 'x'.repeat(30), i);
    expect(cache.byteSize).toBeLessThanOrEqual(100);
    expect(cache.size).toBe(2); // each entry is 30 + 2 × key length ≈ 34–36 bytes
    expect(cache.get('k49')?.value).toHaveLength(30);
  });

  it('does not keep a value larger than the whole budget, and replacing a key frees its old bytes', () => {
    const cache = sized(10, 100);
    cache.set('small', 'x', 1);
    cache.set('huge', 'x'.repeat(200), 2);
    expect(cache.get('huge')).toBeUndefined();
    expect(cache.get('small')?.value).toBe('x');
    cache.set('small', 'y'.repeat(50), 3);
    cache.set('small', 'z', 4);
    expect(cache.byteSize).toBe(2 * 'small'.length + 1);
  });
});

describe('receipt listing cache', () => {
  it('stays within its byte budget when a caller asks for thousands of distinct cursors over large receipts', async () => {
    const deps = memoryDeps({ clock: tickingClock() });
    const caller = { wallet: wallets.alice, subscriptionId: null };
    const metadata = { note: 'm'.repeat(3_900) };
    for (let i = 0; i < 50; i++) {
      await createReceipt(deps, caller, { id: `big-${i}`, lineItems: [{ label: 'Item', priceUsd: 1 }], totalUsd: 1, metadata });
    }
    for (let i = 0; i < 2_000; i++) {
      // Each cursor is a different key the caller made up; every page holds all 50 large receipts.
      await listReceipts(deps, wallets.alice, { limit: 200, cursor: encodeCursor(Date.now() + 10_000_000 + i, 'zzz') });
    }
    const usage = listingCacheUsage(deps);
    expect(usage.bytes).toBeLessThanOrEqual(usage.maxBytes);
    expect(usage.entries).toBeLessThan(2_000);
    expect(usage.entries).toBeGreaterThan(0);
  });
});
