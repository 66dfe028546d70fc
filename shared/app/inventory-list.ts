import { toInventoryItemViews, type InventoryListQuery, type InventoryListResponse } from '../domain/inventory';
import type { AppDeps } from './deps';

export const listInventory = async (
  deps: Pick<AppDeps, 'inventory'>,
  wallet: string,
  query: InventoryListQuery,
): Promise<InventoryListResponse> => {
  const { items, total } = await deps.inventory.list(wallet, query);
  return {
    items: toInventoryItemViews(items),
    total,
    page: query.page,
    limit: query.limit,
    pages: Math.ceil(total / query.limit),
  };
};
