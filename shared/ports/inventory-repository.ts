import type { InventoryListQuery, StoredInventoryItem } from '../domain/inventory';

export interface Versioned<T> {
  value: T;
  etag: string;
}

/** Inventory items, partitioned by merchant wallet: every call names the partition. */
export interface InventoryRepository {
  get(wallet: string, id: string): Promise<Versioned<StoredInventoryItem> | undefined>;
  findBySku(wallet: string, sku: string): Promise<Versioned<StoredInventoryItem> | undefined>;
  /** Throws DuplicateKeyError when the id or the sku is taken in this wallet. */
  create(item: StoredInventoryItem): Promise<void>;
  /** Throws EtagMismatchError when the item changed since `etag`, DuplicateKeyError on a sku clash. */
  replace(item: StoredInventoryItem, etag: string): Promise<void>;
  /** False when there was no such item. */
  delete(wallet: string, id: string): Promise<boolean>;
  /** A page of items; the answer may be shared (frozen): callers do not change it. */
  list(wallet: string, query: InventoryListQuery): Promise<{ items: readonly StoredInventoryItem[]; total: number }>;
}
