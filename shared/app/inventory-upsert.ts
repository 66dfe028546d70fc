import { buildInventoryItem, toInventoryItemView, type InventoryItem, type InventoryUpsertInput } from '../domain/inventory';
import { DomainError } from '../domain/errors';
import { DuplicateKeyError, EtagMismatchError } from '../ports/errors';
import type { AppDeps } from './deps';
import { refuseIfDeletedSince, refuseIfNewer } from './write-order';

const MAX_ATTEMPTS = 10;

export const newInventoryId = (ids: Pick<AppDeps['ids'], 'random'>) => `itm_${ids.random(10)}`;

/**
 * Creates or replaces an item. With `id`: that item of this merchant (404 otherwise). Without: the
 * merchant's item with this sku, else a new item. A sku belongs to one item per merchant; the store's
 * unique key settles races, and an ETag guards every replacement.
 */
export const upsertInventoryItem = async (
  deps: Pick<AppDeps, 'inventory' | 'clock' | 'ids' | 'claims'>,
  wallet: string,
  input: InventoryUpsertInput,
  /** The id a new item gets (an outbox write keeps the id it was answered with); random otherwise. */
  newId?: string,
  /**
   * When the write was accepted, if earlier than now (an outbox entry): it becomes the item's
   * `updatedAt`, and the write is superseded if the item changed or was deleted after it.
   */
  acceptedAt?: number,
): Promise<{ ok: true; item: InventoryItem }> => {
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const existing = input.id
      ? await deps.inventory.get(wallet, input.id)
      : await deps.inventory.findBySku(wallet, input.sku);
    if (input.id && !existing) throw new DomainError('not_found', `inventory item ${input.id} not found`);
    if (acceptedAt !== undefined) {
      if (existing) refuseIfNewer(existing.value.updatedAt, acceptedAt, `inventory item ${existing.value.id}`);
      await refuseIfDeletedSince(deps, wallet, { id: existing?.value.id ?? newId, sku: input.sku }, acceptedAt);
    }
    const now = acceptedAt ?? deps.clock.now();
    try {
      if (existing) {
        const item = buildInventoryItem(input, { id: existing.value.id, wallet, createdAt: existing.value.createdAt }, now);
        await deps.inventory.replace(item, existing.etag);
        return { ok: true, item: toInventoryItemView(item) };
      }
      const item = buildInventoryItem(input, { id: newId ?? newInventoryId(deps.ids), wallet, createdAt: now }, now);
      await deps.inventory.create(item);
      return { ok: true, item: toInventoryItemView(item) };
    } catch (error) {
      if (error instanceof EtagMismatchError) continue;
      if (error instanceof DuplicateKeyError) {
        // Without an id a clash means another request created this sku meanwhile: update it instead.
        if (!input.id && !existing) continue;
        throw new DomainError('conflict', `sku ${input.sku} belongs to another item`, { field: 'sku' });
      }
      throw error;
    }
  }
  throw new DomainError('conflict', 'the item kept changing; try again');
};
