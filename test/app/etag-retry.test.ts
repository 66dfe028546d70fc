import { describe, expect, it } from 'vitest';
import { returnToBudget, takeFromBudget } from '../../shared/app/counters';
import { DEFAULT_ETAG_RETRY, withEtagRetry } from '../../shared/app/etag-retry';
import { upsertInventoryItem } from '../../shared/app/inventory-upsert';
import { updateMerchant } from '../../shared/app/merchants';
import { applyOutboxEntry } from '../../shared/app/outbox';
import { updatePricingConfig } from '../../shared/app/pricing';
import { changeStatus, flushEvents } from '../../shared/app/receipt-status';
import { createReceipt } from '../../shared/app/receipts';
import { memoryDeps } from '../../shared/composition';
import { InventoryUpsertInput } from '../../shared/domain/inventory';
import { DuplicateKeyError, EtagMismatchError } from '../../shared/ports/errors';
import { wallets } from '../support/stores';

const noPause = () => 0;

describe('withEtagRetry', () => {
  it('starts again from the top after a clash of the guarded write, and answers the first attempt that wins', async () => {
    const seen: number[] = [];
    const pauses: number[] = [];
    const result = await withEtagRetry(
      async ({ attempt, write }) => {
        seen.push(attempt);
        await write(async () => {
          if (attempt < 3) throw new EtagMismatchError();
        });
        return `won on ${attempt}`;
      },
      { backoff: (lost) => (pauses.push(lost), 0), exhausted: () => 'lost' },
    );
    expect(result).toBe('won on 3');
    expect(seen).toEqual([1, 2, 3]);
    expect(pauses).toEqual([1, 2]);
  });

  it('ends in `exhausted` after the last attempt, by default the 100th', async () => {
    let attempts = 0;
    const clash = async () => {
      attempts++;
      throw new EtagMismatchError();
    };
    expect(await withEtagRetry(({ write }) => write(clash), { backoff: noPause, exhausted: () => 'lost' })).toBe('lost');
    expect(attempts).toBe(DEFAULT_ETAG_RETRY.maxAttempts);
    expect(DEFAULT_ETAG_RETRY.maxAttempts).toBe(100);
    attempts = 0;
    await expect(withEtagRetry(({ write }) => write(clash), { maxAttempts: 3, backoff: noPause, exhausted: () => { throw new Error('gave up'); } })).rejects.toThrow('gave up');
    expect(attempts).toBe(3);
  });

  it('pauses a random time below min(20, 1 + attempts lost) ms by default', () => {
    for (let lost = 1; lost < 40; lost++) {
      const pause = DEFAULT_ETAG_RETRY.backoff(lost);
      expect(pause).toBeGreaterThanOrEqual(0);
      expect(pause).toBeLessThan(Math.min(20, 1 + lost));
    }
  });

  it('retries only clashes of writes: other errors, and any error outside a write, end it at once', async () => {
    let attempts = 0;
    const options = { backoff: noPause, exhausted: () => 'lost' };
    await expect(withEtagRetry(async ({ write }) => (attempts++, write(async () => { throw new DuplicateKeyError(); })), options)).rejects.toBeInstanceOf(DuplicateKeyError);
    await expect(withEtagRetry(async () => { attempts++; throw new EtagMismatchError(); }, options)).rejects.toBeInstanceOf(EtagMismatchError);
    expect(attempts).toBe(2);
  });

  it('takes what clashes from the options or from the write, and a clash the attempt names itself', async () => {
    let attempts = 0;
    const duplicate = async () => {
      attempts++;
      throw new DuplicateKeyError();
    };
    const options = { maxAttempts: 4, backoff: noPause, exhausted: () => 'lost' };
    expect(await withEtagRetry(({ write }) => write(duplicate), { ...options, retryOn: (error) => error instanceof DuplicateKeyError })).toBe('lost');
    expect(await withEtagRetry(({ write }) => write(duplicate, (error) => error instanceof DuplicateKeyError), options)).toBe('lost');
    expect(await withEtagRetry(({ attempt, retry }) => (attempt < 4 ? retry() : 'won'), options)).toBe('won');
    expect(attempts).toBe(8);
  });
});

/** A store collection whose `methods` always fail with `error`, counting the calls. */
const failing = <T extends object>(collection: T, methods: string[], error: () => Error) => {
  const calls = { count: 0 };
  const proxy = new Proxy(collection, {
    get: (target, name, receiver) => {
      if (typeof name === 'string' && methods.includes(name)) {
        return async () => {
          calls.count++;
          throw error();
        };
      }
      const value = Reflect.get(target, name, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { proxy, calls };
};

describe('every read-modify-write, when its write always clashes', () => {
  const etag = () => new EtagMismatchError();
  const duplicate = () => new DuplicateKeyError();

  it('tries the default number of times, then ends as it always has', async () => {
    const seeded = memoryDeps();
    // Documents to replace: a merchant, a budget with one unit taken, pricing, an item, a receipt with an event.
    await updateMerchant(seeded, wallets.alice, (merchant) => ({ merchant, result: undefined }));
    await takeFromBudget(seeded, 'budget:t', 5, Date.now() + 60_000);
    await updatePricingConfig(seeded, { platformFeeBps: 150 });
    const item = await upsertInventoryItem(seeded, wallets.alice, InventoryUpsertInput.parse({ sku: 'TEA', name: 'Tea', priceUsd: 4 }));
    await createReceipt(seeded, { wallet: wallets.alice, subscriptionId: null }, { id: 'r-1', lineItems: [{ label: 'Tea', priceUsd: 4 }], totalUsd: 4, webhook_url: 'http://localhost:9/hooks' });
    await seeded.receipts.replace(wallets.alice, { ...(await seeded.receipts.get(wallets.alice, 'r-1'))!.value, pendingEvents: [{ eventId: 'e-1', receiptId: 'r-1', wallet: wallets.alice, target: 'http://localhost:9/hooks', body: '{}', signingSubscriptionId: null, createdAt: 1 }] }, (await seeded.receipts.get(wallets.alice, 'r-1'))!.etag);

    const merchants = failing(seeded.merchants, ['replace'], etag);
    const claims = failing(seeded.claims, ['replace'], etag);
    const platform = failing(seeded.platform, ['replace'], etag);
    const inventory = failing(seeded.inventory, ['replace'], etag);
    const receipts = failing(seeded.receipts, ['replace'], etag);
    const deps = { ...seeded, merchants: merchants.proxy, claims: claims.proxy, platform: platform.proxy, inventory: inventory.proxy, receipts: receipts.proxy };

    const outcomes = await Promise.allSettled([
      updateMerchant(deps, wallets.alice, (merchant) => ({ merchant, result: 'changed' })),
      takeFromBudget(deps, 'budget:t', 5, Date.now() + 60_000),
      updatePricingConfig(deps, { platformFeeBps: 200 }),
      upsertInventoryItem(deps, wallets.alice, InventoryUpsertInput.parse({ id: item.item.id, sku: 'TEA', name: 'Green tea', priceUsd: 5 })),
      changeStatus(deps, { wallet: wallets.alice, receiptId: 'r-1', status: 'link_opened', actor: 'merchant' }),
    ]);
    expect(outcomes.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value : (outcome.reason as Error).message))).toEqual([
      'the merchant record kept changing; try again',
      false,
      'pricing kept changing; try again',
      'the item kept changing; try again',
      'the receipt kept changing; try again',
    ]);
    const tries = DEFAULT_ETAG_RETRY.maxAttempts;
    expect([merchants, claims, platform, inventory, receipts].map(({ calls }) => calls.count)).toEqual([tries, tries, tries, tries, tries]);

    claims.calls.count = 0;
    receipts.calls.count = 0;
    expect(await Promise.all([returnToBudget(deps, 'budget:t'), flushEvents(deps, wallets.alice, 'r-1')])).toEqual([undefined, 1]);
    expect([claims.calls.count, receipts.calls.count]).toEqual([tries, tries]);
  });

  it('counts a first document another request created as a clash where it did, and as a conflict where it did', async () => {
    const seeded = memoryDeps();
    const merchants = failing(seeded.merchants, ['create'], duplicate);
    const claims = failing(seeded.claims, ['create'], duplicate);
    const platform = failing(seeded.platform, ['create'], duplicate);
    const inventory = failing(seeded.inventory, ['create'], duplicate);
    const deps = { ...seeded, merchants: merchants.proxy, claims: claims.proxy, platform: platform.proxy, inventory: inventory.proxy };
    const entry = { outboxId: 'o-1', seq: 1, documentKey: `inventory:${wallets.alice}:itm_a`, acceptedAt: 1, operation: { kind: 'inventory-delete' as const, wallet: wallets.alice, id: 'itm_a' } };

    const outcomes = await Promise.allSettled([
      updateMerchant(deps, wallets.alice, (merchant) => ({ merchant, result: 'changed' })),
      takeFromBudget(deps, 'budget:t', 5, Date.now() + 60_000),
      updatePricingConfig(deps, { platformFeeBps: 200 }),
      // A new sku that "another request created": retried (and updated, when it is found).
      upsertInventoryItem(deps, wallets.alice, InventoryUpsertInput.parse({ sku: 'NEW', name: 'New', priceUsd: 1 })),
    ]);
    expect(outcomes.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value : (outcome.reason as Error).message))).toEqual([
      'the merchant record kept changing; try again',
      false,
      'pricing kept changing; try again',
      'the item kept changing; try again',
    ]);
    const tries = DEFAULT_ETAG_RETRY.maxAttempts;
    expect([merchants, platform, inventory].map(({ calls }) => calls.count)).toEqual([tries, tries, tries]);
    // The outbox's watermark: still clashing after every attempt counts as superseded.
    claims.calls.count = 0;
    expect(await applyOutboxEntry(deps, entry)).toBe('superseded');
    expect(claims.calls.count).toBe(tries);

    // An item named by id whose sku another item holds: a conflict at once, not a retry.
    const taken = failing(seeded.inventory, ['replace'], duplicate);
    const created = await upsertInventoryItem(seeded, wallets.alice, InventoryUpsertInput.parse({ sku: 'A', name: 'A', priceUsd: 1 }));
    await expect(upsertInventoryItem({ ...seeded, inventory: taken.proxy }, wallets.alice, InventoryUpsertInput.parse({ id: created.item.id, sku: 'B', name: 'A', priceUsd: 1 }))).rejects.toThrow('sku B belongs to another item');
    expect(taken.calls.count).toBe(1);
  });
});
