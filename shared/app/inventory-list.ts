import { toInventoryItemViews, type InventoryListQuery, type InventoryListResponse } from '../domain/inventory';
import type { AppDeps } from './deps';

/**
 * Answers for pages the store shares (frozen: served again until the next write), by page and
 * query. Frozen themselves, so the HTTP layer serializes each one once.
 */
const answers = new WeakMap<object, Map<string, InventoryListResponse>>();

export const listInventory = async (
  deps: Pick<AppDeps, 'inventory'>,
  wallet: string,
  query: InventoryListQuery,
): Promise<InventoryListResponse> => {
  const page = await deps.inventory.list(wallet, query);
  const answerFor = () => ({
    items: toInventoryItemViews(page.items),
    total: page.total,
    page: query.page,
    limit: query.limit,
    pages: Math.ceil(page.total / query.limit),
  });
  if (!Object.isFrozen(page)) return answerFor();
  let byQuery = answers.get(page);
  if (!byQuery) answers.set(page, (byQuery = new Map()));
  const key = `${query.page}:${query.limit}`;
  let answer = byQuery.get(key);
  if (!answer) byQuery.set(key, (answer = Object.freeze(answerFor())));
  return answer;
};
