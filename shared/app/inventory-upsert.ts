import { buildInventoryItem, toInventoryItemView, type InventoryItem, type InventoryUpsertInput } from '../domain/inventory';
import { DomainError } from '../domain/errors';
import { DuplicateKeyError } from '../ports/errors';
import type { AppDeps } from './deps';
import { isEtagMismatch, withEtagRetry } from './etag-retry';
import { refuseIfDeletedSince, refuseIfNewer } from './write-order';

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
): Promise<{ ok: true; item: InventoryItem }> =>
  withEtagRetry(
    async ({ write }) => {
      const existing = input.id
        ? await deps.inventory.get(wallet, input.id)
        : await deps.inventory.findBySku(wallet, input.sku);
      if (input.id && !existing) throw new DomainError('not_found', `inventory item ${input.id} not found`);
      if (acceptedAt !== undefined) {
        if (existing) refuseIfNewer(existing.value.updatedAt, acceptedAt, `inventory item ${existing.value.id}`);
        await refuseIfDeletedSince(deps, wallet, { id: existing?.value.id ?? newId, sku: input.sku }, acceptedAt);
      }
      const now = acceptedAt ?? deps.clock.now();
      // Without an id, a sku clash on create means another request created this sku meanwhile: update it instead.
      const clashes = (error: unknown) => isEtagMismatch(error) || (error instanceof DuplicateKeyError && !input.id && !existing);
      const item = existing
        ? buildInventoryItem(input, { id: existing.value.id, wallet, createdAt: existing.value.createdAt }, now)
        : buildInventoryItem(input, { id: newId ?? newInventoryId(deps.ids), wallet, createdAt: now }, now);
      try {
        await write(() => (existing ? deps.inventory.replace(item, existing.etag) : deps.inventory.create(item)), clashes);
      } catch (error) {
        if (error instanceof DuplicateKeyError) throw new DomainError('conflict', `sku ${input.sku} belongs to another item`, { field: 'sku' });
        throw error;
      }
      return { ok: true as const, item: toInventoryItemView(item) };
    },
    {
      exhausted: () => {
        throw new DomainError('conflict', 'the item kept changing; try again');
      },
    },
  );
