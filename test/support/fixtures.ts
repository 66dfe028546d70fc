import type { Clock } from '../../shared/ports/runtime';
import { InventoryListQuery, InventoryUpsertInput } from '../../shared/domain/inventory';

/** A clock that moves one second per reading, so ordering by time is deterministic. */
export const tickingClock = (start = 1_700_000_000_000): Clock => {
  let now = start;
  return { now: () => (now += 1_000) };
};

export const itemInput = (fields: Record<string, unknown>) => InventoryUpsertInput.parse({ name: 'Item', priceUsd: 1, ...fields });
export const listQuery = (params: Record<string, string> = {}) => InventoryListQuery.parse(params);
