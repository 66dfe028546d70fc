import { DomainError } from '../domain/errors';
import type { AppDeps } from './deps';
import { recordTombstones, refuseIfNewer } from './write-order';

/**
 * Deletes an item and leaves tombstones (its id and its sku, with the deletion time), so a write
 * accepted before the delete and applied after it cannot bring the item back. With `acceptedAt` (an
 * outbox entry) the delete is superseded if the item was written after it was accepted.
 */
export const deleteInventoryItem = async (
  deps: Pick<AppDeps, 'inventory' | 'claims' | 'clock'>,
  wallet: string,
  id: string | undefined,
  acceptedAt?: number,
): Promise<{ ok: true; id: string }> => {
  if (!id) throw new DomainError('id_required', 'query parameter id is required');
  const existing = await deps.inventory.get(wallet, id);
  if (!existing) throw new DomainError('not_found', `inventory item ${id} not found`);
  refuseIfNewer(existing.value.updatedAt, acceptedAt, `inventory item ${id}`);
  await recordTombstones(deps, wallet, { id, sku: existing.value.sku }, acceptedAt ?? deps.clock.now());
  const deleted = await deps.inventory.delete(wallet, id);
  if (!deleted) throw new DomainError('not_found', `inventory item ${id} not found`);
  return { ok: true, id };
};
