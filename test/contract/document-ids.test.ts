import { beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../shared/app/api-keys';
import type { AppDeps } from '../../shared/app/deps';
import { upsertInventoryItem } from '../../shared/app/inventory-upsert';
import { MAX_STORED_ID_LENGTH, isStorableId } from '../../shared/domain/ids';
import type { Subscription } from '../../shared/domain/subscription';
import type { StoredInventoryItem } from '../../shared/domain/inventory';
import { UnstorableIdError } from '../../shared/ports/errors';
import { itemInput } from '../support/fixtures';
import { allStores, wallets } from '../support/stores';

/** Keys Cosmos cannot hold: each made the SDK throw, or addressed another resource, before the adapters checked. */
const unusable: Array<[string, string]> = [
  ['empty', ''],
  ['blank', ' '],
  ['a tab', '\t'],
  ['lone surrogates', '\uD800\uD800'],
  ['a lone low surrogate', 'a\uDC00'],
  ['a slash', 'a/b'],
  ['a backslash', 'a\\b'],
  ['a hash', 'a#b'],
  ['a question mark', 'a?b'],
  ['percent-encoding', 'a%2Fb'],
  ['the dot segment', '.'],
  ['the dot-dot segment', '..'],
  ['256 characters', 'x'.repeat(MAX_STORED_ID_LENGTH + 1)],
  ['8,000 characters', 'x'.repeat(8_000)],
  ['a NUL', 'a\u0000b'],
  ['a trailing space', 'a '],
];

/** Odd keys the rule lets through: each must round-trip on every store, the Cosmos protocol server included. */
const usable = ['x'.repeat(MAX_STORED_ID_LENGTH), '😀'.repeat(127), 'a b', 'a.b', '...', "a'b\"c:d+e&f=g", 'é', '-'];

const claim = (id: string) => ({ id, owner: 'contract', createdAt: 1 });

describe.each(allStores)('document ids on the $name store', (store) => {
  let deps: AppDeps;
  let item: StoredInventoryItem;
  let subscription: Subscription;

  beforeAll(async () => {
    deps = await store.make();
    await deps.claims.create('sentinel', claim('sentinel'));
    const { item: created } = await upsertInventoryItem(deps, wallets.alice, itemInput({ sku: 'ID-1', name: 'Ids', priceUsd: 1 }));
    item = (await deps.inventory.get(wallets.alice, created.id))!.value;
    ({ subscription } = await createApiKey(deps, { wallet: wallets.alice, scopes: [], plan: 'pro', brand: 'default' }));
  });

  it.each(unusable)('answers %s as no such document on reads and deletes, and as invalid input on writes', async (_, id) => {
    expect(isStorableId(id)).toBe(false);
    const refused = { code: 'invalid_input', details: { field: 'id' } };

    // A collection partitioned by id (claims), then one by wallet (receipts): the id, then the partition value.
    expect(await deps.claims.get(id, id)).toBeUndefined();
    expect(await deps.claims.delete(id, id)).toBe(false);
    await expect(deps.claims.create(id, claim(id))).rejects.toBeInstanceOf(UnstorableIdError);
    await expect(deps.claims.upsert(id, claim(id))).rejects.toMatchObject(refused);
    await expect(deps.claims.replace(id, claim(id), '"etag"')).rejects.toMatchObject(refused);
    expect(await deps.receipts.get(wallets.alice, id)).toBeUndefined();
    expect(await deps.receipts.get(id, 'R-1')).toBeUndefined();
    expect(await deps.receipts.delete(id, 'R-1')).toBe(false);

    expect(await deps.inventory.get(wallets.alice, id)).toBeUndefined();
    expect(await deps.inventory.delete(wallets.alice, id)).toBe(false);
    await expect(deps.inventory.create({ ...item, id })).rejects.toMatchObject(refused);
    await expect(deps.inventory.replace({ ...item, id }, 'any')).rejects.toMatchObject(refused);

    expect(await deps.subscriptions.get(id)).toBeUndefined();
    await expect(deps.subscriptions.touch(id, 2)).resolves.toBeUndefined();
    await expect(deps.subscriptions.create({ ...subscription, id }, 'f'.repeat(64))).rejects.toMatchObject(refused);
    await expect(deps.subscriptions.update({ ...subscription, id })).rejects.toMatchObject(refused);

    // Nothing else was touched: a delete of `..` once addressed the container itself.
    expect((await deps.claims.get('sentinel', 'sentinel'))?.value).toEqual(claim('sentinel'));
    expect((await deps.inventory.get(wallets.alice, item.id))?.value).toEqual(item);
    expect(await deps.subscriptions.get(subscription.id)).toMatchObject({ id: subscription.id });
  });

  it.each(usable.map((id) => [JSON.stringify(id.length > 20 ? `${id.slice(0, 8)}…(${id.length})` : id), id]))('holds %s: create, read, replace, delete', async (_, id) => {
    expect(isStorableId(id)).toBe(true);
    const etag = await deps.claims.create(id, claim(id));
    expect(await deps.claims.get(id, id)).toEqual({ value: claim(id), etag });
    const replaced = await deps.claims.replace(id, { ...claim(id), owner: 'again' }, etag);
    expect((await deps.claims.get(id, id))?.etag).toBe(replaced);
    expect(await deps.claims.delete(id, id, replaced)).toBe(true);
    expect(await deps.claims.get(id, id)).toBeUndefined();
  });
});
