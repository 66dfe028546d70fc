import { DomainError } from '../domain/errors';
import type { AppDeps } from './deps';

export const deleteInventoryItem = async (
  deps: Pick<AppDeps, 'inventory'>,
  wallet: string,
  id: string | undefined,
): Promise<{ ok: true; id: string }> => {
  if (!id) throw new DomainError('id_required', 'query parameter id is required');
  const deleted = await deps.inventory.delete(wallet, id);
  if (!deleted) throw new DomainError('not_found', `inventory item ${id} not found`);
  return { ok: true, id };
};
