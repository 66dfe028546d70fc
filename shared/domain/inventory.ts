import { z } from 'zod';
import { usdAmount, MAX_USD } from './money';
import { Id, blankAsAbsent, queryIntegerOr } from './query-params';

export const MAX_PAGE_WINDOW = 10_000;
export const INVENTORY_LIMIT_DEFAULT = 50;
export const INVENTORY_LIMIT_MAX = 200;

const text = (max: number) => z.string().trim().max(max);

/** What a merchant sends to create or replace an item (`id` present: update that item). */
export const InventoryUpsertInput = z.object({
  id: Id.optional(),
  sku: text(64).min(1, 'is required'),
  name: text(200).min(1, 'is required'),
  priceUsd: usdAmount,
  /** -1 means "not tracked" and counts as in stock. */
  stockQty: z.number().int().min(-1).max(1_000_000_000).default(-1),
  category: text(100).default(''),
  description: text(2000).default(''),
  taxable: z.boolean().default(true),
  tags: z
    .array(text(50).min(1))
    .max(50)
    .default([])
    .transform((tags) => [...new Set(tags)]),
  industryPack: text(50).default(''),
});
export type InventoryUpsertInput = z.output<typeof InventoryUpsertInput>;

/** The stored item and the item on the wire (the stored document adds only `searchText`). */
export const InventoryItem = z.object({
  id: z.string(),
  wallet: z.string(),
  sku: z.string(),
  name: z.string(),
  priceUsd: z.number(),
  stockQty: z.number().int(),
  category: z.string(),
  description: z.string(),
  taxable: z.boolean(),
  tags: z.array(z.string()),
  industryPack: z.string(),
  createdAt: z.number().int(),
  updatedAt: z.number().int(),
});
export type InventoryItem = z.infer<typeof InventoryItem>;

export type StoredInventoryItem = InventoryItem & { searchText: string };

/** Lower-cased text that `q` searches: name, SKU, description, category and tags. */
export const searchTextOf = (item: Pick<InventoryItem, 'name' | 'sku' | 'description' | 'category' | 'tags'>): string =>
  [item.name, item.sku, item.description, item.category, ...item.tags].join('\n').toLowerCase();

export const buildInventoryItem = (
  input: InventoryUpsertInput,
  identity: { id: string; wallet: string; createdAt: number },
  now: number,
): StoredInventoryItem => {
  const item: InventoryItem = {
    id: identity.id,
    wallet: identity.wallet,
    sku: input.sku,
    name: input.name,
    priceUsd: input.priceUsd,
    stockQty: input.stockQty,
    category: input.category,
    description: input.description,
    taxable: input.taxable,
    tags: input.tags,
    industryPack: input.industryPack,
    createdAt: identity.createdAt,
    updatedAt: now,
  };
  return { ...item, searchText: searchTextOf(item) };
};

const views = new WeakMap<InventoryItem, InventoryItem>();

/**
 * The wire view: an allow-list, so store fields (`searchText`, `_etag`, …) never leak. The view of an
 * immutable (frozen) item is made once and is itself frozen.
 */
export const toInventoryItemView = (item: InventoryItem): InventoryItem => {
  if (!Object.isFrozen(item)) return viewOf(item);
  let view = views.get(item);
  if (!view) views.set(item, (view = Object.freeze(viewOf(item))));
  return view;
};

const pageViews = new WeakMap<readonly InventoryItem[], readonly InventoryItem[]>();

/** The wire views of a page of items; for a frozen page (shared by the store) made once, and frozen. */
export const toInventoryItemViews = (items: readonly InventoryItem[]): InventoryItem[] => {
  if (!Object.isFrozen(items)) return items.map(toInventoryItemView);
  let views = pageViews.get(items);
  if (!views) pageViews.set(items, (views = Object.freeze(items.map(toInventoryItemView))));
  return views as InventoryItem[];
};

const viewOf = (item: InventoryItem): InventoryItem => ({
  id: item.id,
  wallet: item.wallet,
  sku: item.sku,
  name: item.name,
  priceUsd: item.priceUsd,
  stockQty: item.stockQty,
  category: item.category,
  description: item.description,
  taxable: item.taxable,
  tags: item.tags,
  industryPack: item.industryPack,
  createdAt: item.createdAt,
  updatedAt: item.updatedAt,
});

export const inventorySortFields = ['name', 'sku', 'priceUsd', 'stockQty', 'updatedAt'] as const;

const optionalText = z.preprocess(blankAsAbsent, z.string().max(200).optional());
const queryNumber = z.preprocess(
  blankAsAbsent,
  z.coerce.number({ error: 'must be a number' }).finite().min(0).max(MAX_USD).optional(),
);
const csv = z.preprocess(
  blankAsAbsent,
  z
    .string()
    .max(2000)
    .optional()
    .transform((value) => (value ? [...new Set(value.split(',').map((v) => v.trim()).filter(Boolean))] : [])),
);
const choice = <T extends readonly [string, ...string[]]>(values: T, fallback: T[number]) =>
  z.preprocess(blankAsAbsent, z.enum(values).default(fallback as never));

export const InventoryListQuery = z
  .object({
    q: optionalText.transform((value) => value?.trim().toLowerCase() || undefined),
    category: optionalText,
    taxable: choice(['true', 'false', 'any'] as const, 'any'),
    stock: choice(['in', 'out', 'any'] as const, 'any'),
    priceMin: queryNumber,
    priceMax: queryNumber,
    tags: csv,
    tagsMode: choice(['any', 'all'] as const, 'any'),
    pack: optionalText,
    sort: choice(inventorySortFields, 'updatedAt'),
    order: choice(['asc', 'desc'] as const, 'desc'),
    limit: queryIntegerOr(1, INVENTORY_LIMIT_MAX, INVENTORY_LIMIT_DEFAULT),
    page: queryIntegerOr(1, MAX_PAGE_WINDOW, 1),
  })
  .superRefine((query, ctx) => {
    if (query.priceMin !== undefined && query.priceMax !== undefined && query.priceMin > query.priceMax) {
      ctx.addIssue({ code: 'custom', path: ['priceMin'], message: 'must not exceed priceMax' });
    }
    if (query.page * query.limit > MAX_PAGE_WINDOW) {
      ctx.addIssue({ code: 'custom', path: ['page'], message: `page × limit must not exceed ${MAX_PAGE_WINDOW}` });
    }
  });
export type InventoryListQuery = z.output<typeof InventoryListQuery>;

export const InventoryListResponse = z.object({
  items: z.array(InventoryItem),
  total: z.number().int(),
  page: z.number().int(),
  limit: z.number().int(),
  pages: z.number().int(),
});
export type InventoryListResponse = z.infer<typeof InventoryListResponse>;

export const InventoryDeleteQuery = z.object({ id: z.preprocess(blankAsAbsent, Id.optional()) });

/** The filter and order a store applies; memory and Cosmos adapters implement the same semantics. */
export const matchesInventoryFilter = (item: StoredInventoryItem, query: InventoryListQuery): boolean => {
  if (query.q && !item.searchText.includes(query.q)) return false;
  if (query.category !== undefined && item.category !== query.category) return false;
  if (query.taxable !== 'any' && item.taxable !== (query.taxable === 'true')) return false;
  if (query.stock === 'in' && item.stockQty === 0) return false;
  if (query.stock === 'out' && item.stockQty !== 0) return false;
  if (query.priceMin !== undefined && item.priceUsd < query.priceMin) return false;
  if (query.priceMax !== undefined && item.priceUsd > query.priceMax) return false;
  if (query.pack !== undefined && item.industryPack !== query.pack) return false;
  if (query.tags.length > 0) {
    const has = (tag: string) => item.tags.includes(tag);
    if (query.tagsMode === 'all' ? !query.tags.every(has) : !query.tags.some(has)) return false;
  }
  return true;
};
