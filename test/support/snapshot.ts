import type { AppDeps } from '../../shared/app/deps';
import { BoundedCache } from '../../shared/app/bounded-cache';
import { MemoryRateLimiter } from '../../shared/adapters/memory/rate-limiter';

/**
 * Not state: the rate limiter counts every call by design (refused ones too), and a key's
 * `lastUsedAt` records use of a valid key whatever the answer (at most every 5 minutes), as do its
 * usage counters (`usage:<key>:<period>` claims, written a second after the calls they count).
 */
const notState = new Set<unknown>([MemoryRateLimiter]);
const ignoredFields = new Set(['lastUsedAt']);
const isUsageCounter = (key: unknown) => typeof key === 'string' && key.startsWith('usage:');

const plain = (value: unknown): unknown => {
  if (value instanceof BoundedCache) return undefined; // caches of reads, rebuilt after every write
  if (value instanceof Map) {
    return [...value.entries()]
      .filter(([key]) => !isUsageCounter(key))
      .map(([key, entry]) => [plain(key), plain(entry)] as const)
      .sort(([a], [b]) => (String(a) < String(b) ? -1 : 1));
  }
  if (value instanceof Set) return [...value].map(plain).map((entry) => JSON.stringify(entry)).sort();
  if (Array.isArray(value)) return value.map(plain);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      if (ignoredFields.has(key)) continue;
      const member = plain((value as Record<string, unknown>)[key]);
      if (member !== undefined) out[key] = member;
    }
    return out;
  }
  return typeof value === 'function' ? undefined : value;
};

/**
 * Everything the in-memory adapters of `deps` hold (documents with their ETags, inventory and its
 * sku index, subscriptions, queued messages), as one text: two equal snapshots mean nothing was
 * written in between. Reads every `Memory*` adapter's own fields, so a new adapter is included.
 */
export const storeSnapshot = (deps: AppDeps): string => {
  const parts: Record<string, unknown> = {};
  for (const [name, adapter] of Object.entries(deps).sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (!adapter || typeof adapter !== 'object' || notState.has(adapter.constructor)) continue;
    if (!adapter.constructor.name.startsWith('Memory')) continue;
    parts[name] = plain(adapter);
  }
  return JSON.stringify(parts);
};
