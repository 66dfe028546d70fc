import { beforeEach, describe, expect, it } from 'vitest';
import type { AppDeps } from '../../shared/app/deps';
import { deleteInventoryItem } from '../../shared/app/inventory-delete';
import { listInventory } from '../../shared/app/inventory-list';
import { upsertInventoryItem } from '../../shared/app/inventory-upsert';
import { DomainError } from '../../shared/domain/errors';
import { itemInput, listQuery, tickingClock } from '../support/fixtures';
import { allStores, wallets } from '../support/stores';

const { alice, bob } = wallets;

const expectCode = async (promise: Promise<unknown>, code: string) => {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(DomainError);
  expect((error as DomainError).code).toBe(code);
};

describe.each(allStores)('inventory on the $name store', (store) => {
  let deps: AppDeps;
  const upsert = (fields: Record<string, unknown>, wallet = alice) => upsertInventoryItem(deps, wallet, itemInput(fields));
  const list = (params: Record<string, string> = {}, wallet = alice) => listInventory(deps, wallet, listQuery(params));
  const skus = async (params: Record<string, string> = {}) => (await list(params)).items.map((item) => item.sku);

  beforeEach(async () => {
    deps = await store.make({ clock: tickingClock() });
  });

  describe('upsert', () => {
    it('creates an item with service-assigned id, the merchant wallet and defaults', async () => {
      const { ok, item } = await upsert({ sku: 'A', name: 'Apple', priceUsd: 1.25 });
      expect(ok).toBe(true);
      expect(item).toEqual({
        id: expect.stringMatching(/^itm_[a-z2-7]{16}$/),
        wallet: alice,
        sku: 'A',
        name: 'Apple',
        priceUsd: 1.25,
        stockQty: -1,
        category: '',
        description: '',
        taxable: true,
        tags: [],
        industryPack: '',
        createdAt: item.createdAt,
        updatedAt: item.createdAt,
      });
    });

    it('matches by sku without an id and replaces every field, keeping id and createdAt', async () => {
      const first = (await upsert({ sku: 'A', name: 'Apple', priceUsd: 1, category: 'fruit', tags: ['red'] })).item;
      const second = (await upsert({ sku: 'A', name: 'Green apple', priceUsd: 2 })).item;
      expect(second.id).toBe(first.id);
      expect(second.createdAt).toBe(first.createdAt);
      expect(second.updatedAt).toBeGreaterThan(first.updatedAt);
      expect(second).toMatchObject({ name: 'Green apple', priceUsd: 2, category: '', tags: [] });
      expect((await list()).total).toBe(1);
    });

    it('matches by id and may change the sku', async () => {
      const { item } = await upsert({ sku: 'A' });
      const renamed = (await upsert({ id: item.id, sku: 'A2', name: 'Renamed' })).item;
      expect(renamed).toMatchObject({ id: item.id, sku: 'A2', name: 'Renamed' });
      expect(await skus()).toEqual(['A2']);
    });

    it('answers not_found for an id that is not this merchant’s, and changes nothing', async () => {
      const { item } = await upsert({ sku: 'A', name: 'Alice item' });
      await expectCode(upsert({ id: item.id, sku: 'A', name: 'Taken over' }, bob), 'not_found');
      await expectCode(upsert({ id: 'itm_unknown', sku: 'B' }), 'not_found');
      expect((await list()).items[0]?.name).toBe('Alice item');
      expect((await list({}, bob)).total).toBe(0);
    });

    it('answers conflict when an id upsert takes another item’s sku', async () => {
      await upsert({ sku: 'A' });
      const { item } = await upsert({ sku: 'B' });
      await expectCode(upsert({ id: item.id, sku: 'A' }), 'conflict');
      expect((await skus()).sort()).toEqual(['A', 'B']);
    });

    it('keeps one item per sku when the same sku is created concurrently', async () => {
      const results = await Promise.all(Array.from({ length: 6 }, (_, n) => upsert({ sku: 'RACE', name: `n${n}` })));
      expect(new Set(results.map((result) => result.item.id)).size).toBe(1);
      expect((await list()).total).toBe(1);
    });

    it('lets two merchants use the same sku independently', async () => {
      await upsert({ sku: 'A', name: 'Alice' });
      await upsert({ sku: 'A', name: 'Bob' }, bob);
      expect((await list()).items.map((item) => item.name)).toEqual(['Alice']);
      expect((await list({}, bob)).items.map((item) => item.name)).toEqual(['Bob']);
    });
  });

  describe('delete', () => {
    it('deletes an item of this merchant and answers {ok, id}', async () => {
      const { item } = await upsert({ sku: 'A' });
      expect(await deleteInventoryItem(deps, alice, item.id)).toEqual({ ok: true, id: item.id });
      expect((await list()).total).toBe(0);
      await expectCode(deleteInventoryItem(deps, alice, item.id), 'not_found');
    });

    it('answers not_found for another merchant’s item and id_required without an id', async () => {
      const { item } = await upsert({ sku: 'A' });
      await expectCode(deleteInventoryItem(deps, bob, item.id), 'not_found');
      await expectCode(deleteInventoryItem(deps, alice, undefined), 'id_required');
      expect((await list()).total).toBe(1);
    });
  });

  describe('list', () => {
    beforeEach(async () => {
      // Created in this order, so updatedAt rises from A to E.
      await upsert({ sku: 'A', name: 'Espresso beans', priceUsd: 12.5, stockQty: 10, category: 'coffee', tags: ['beans', 'dark'], industryPack: 'cafe' });
      await upsert({ sku: 'B', name: 'Mug', priceUsd: 8, stockQty: 0, category: 'merch', tags: ['ceramic'], taxable: false });
      await upsert({ sku: 'C', name: 'Gift card', priceUsd: 25, stockQty: -1, category: 'gift', description: 'Redeemable in store', taxable: false });
      await upsert({ sku: 'D', name: 'Decaf beans', priceUsd: 11, stockQty: 3, category: 'coffee', tags: ['beans', 'light'], industryPack: 'cafe' });
      await upsert({ sku: 'E', name: 'Tote bag', priceUsd: 15.75, stockQty: 0, category: 'merch', tags: ['cotton', 'dark'] });
      await upsert({ sku: 'Z', name: 'Not alice', priceUsd: 1 }, bob);
    });

    it('defaults to newest first, page 1 of 50, and reports total and pages', async () => {
      const result = await list();
      expect(result.items.map((item) => item.sku)).toEqual(['E', 'D', 'C', 'B', 'A']);
      expect(result).toMatchObject({ total: 5, page: 1, limit: 50, pages: 1 });
      expect(result.items[0]).not.toHaveProperty('searchText');
    });

    it('searches q case-insensitively over name, sku, description, category and tags', async () => {
      expect(await skus({ q: 'BEANS' })).toEqual(['D', 'A']);
      expect(await skus({ q: 'redeemable' })).toEqual(['C']);
      expect(await skus({ q: 'merch' })).toEqual(['E', 'B']);
      expect(await skus({ q: 'ceramic' })).toEqual(['B']);
      expect(await skus({ q: 'd' , sort: 'sku', order: 'asc' })).toContain('D');
      expect(await skus({ q: 'nothing-like-this' })).toEqual([]);
    });

    it('filters by category, taxable, stock, price range, tags and pack', async () => {
      expect(await skus({ category: 'coffee' })).toEqual(['D', 'A']);
      expect(await skus({ taxable: 'false' })).toEqual(['C', 'B']);
      expect(await skus({ taxable: 'true' })).toEqual(['E', 'D', 'A']);
      expect(await skus({ taxable: 'any' })).toHaveLength(5);
      expect(await skus({ stock: 'in' })).toEqual(['D', 'C', 'A']);
      expect(await skus({ stock: 'out' })).toEqual(['E', 'B']);
      expect(await skus({ priceMin: '11', priceMax: '15.75' })).toEqual(['E', 'D', 'A']);
      expect(await skus({ priceMin: '12.5' })).toEqual(['E', 'C', 'A']);
      expect(await skus({ priceMax: '8' })).toEqual(['B']);
      expect(await skus({ tags: 'dark,light' })).toEqual(['E', 'D', 'A']);
      expect(await skus({ tags: 'beans,dark', tagsMode: 'all' })).toEqual(['A']);
      expect(await skus({ tags: 'dark', tagsMode: 'any' })).toEqual(['E', 'A']);
      expect(await skus({ pack: 'cafe' })).toEqual(['D', 'A']);
      expect(await skus({ category: 'coffee', stock: 'in', priceMax: '11.5', q: 'bean' })).toEqual(['D']);
    });

    it.each([
      ['name', 'asc', ['D', 'A', 'C', 'B', 'E']],
      ['name', 'desc', ['E', 'B', 'C', 'A', 'D']],
      ['sku', 'asc', ['A', 'B', 'C', 'D', 'E']],
      ['priceUsd', 'asc', ['B', 'D', 'A', 'E', 'C']],
      ['priceUsd', 'desc', ['C', 'E', 'A', 'D', 'B']],
      ['updatedAt', 'asc', ['A', 'B', 'C', 'D', 'E']],
    ])('sorts by %s %s', async (sort, order, expected) => {
      expect(await skus({ sort, order })).toEqual(expected);
    });

    it('sorts by stockQty, not-tracked (-1) lowest', async () => {
      const quantities = async (order: string) => (await list({ sort: 'stockQty', order })).items.map((item) => item.stockQty);
      expect(await quantities('desc')).toEqual([10, 3, 0, 0, -1]);
      expect(await quantities('asc')).toEqual([-1, 0, 0, 3, 10]);
    });

    it('pages with limit and page, keeping total and pages', async () => {
      const pages = await Promise.all([1, 2, 3].map((page) => list({ sort: 'sku', order: 'asc', limit: '2', page: String(page) })));
      expect(pages.map((page) => page.items.map((item) => item.sku))).toEqual([['A', 'B'], ['C', 'D'], ['E']]);
      expect(pages[2]).toMatchObject({ total: 5, page: 3, limit: 2, pages: 3 });
      const beyond = await list({ limit: '2', page: '9' });
      expect(beyond).toMatchObject({ items: [], total: 5, page: 9, pages: 3 });
    });

    it('pages with a filter applied before paging', async () => {
      const second = await list({ category: 'merch', sort: 'sku', order: 'asc', limit: '1', page: '2' });
      expect(second.items.map((item) => item.sku)).toEqual(['E']);
      expect(second).toMatchObject({ total: 2, pages: 2 });
    });
  });
});
