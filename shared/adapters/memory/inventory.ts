import { randomUUID } from 'node:crypto';
import { matchesInventoryFilter, type InventoryListQuery, type StoredInventoryItem } from '../../domain/inventory';
import { BoundedCache } from '../../app/bounded-cache';
import { DuplicateKeyError, EtagMismatchError, assertStorableKeys, storableKeys } from '../../ports/errors';
import type { InventoryRepository, Versioned } from '../../ports/inventory-repository';

type Row = Versioned<StoredInventoryItem>;

/** One merchant's items, with the sku index that makes the sku unique (the Cosmos unique key's twin). */
interface Partition {
  byId: Map<string, Row>;
  idBySku: Map<string, string>;
  /** Pages served since the last write, by query: a repeated listing is not filtered and sorted again. */
  pages: BoundedCache<Page>;
  /** The same, by query object: the HTTP layer hands out one frozen object per distinct query string. */
  pagesByQuery: WeakMap<InventoryListQuery, Page>;
}

type Page = Readonly<{ items: readonly StoredInventoryItem[]; total: number }>;

/** A page holds references to stored (shared) items: what it adds is its array. */
const newPageCache = () => new BoundedCache<Page>({ maxEntries: 64, maxBytes: 1024 * 1024, sizeOf: (page) => 64 + 8 * page.items.length });

/** Stored values are frozen copies: reads hand them out without copying, and nobody can change them. */
const frozenCopy = (item: StoredInventoryItem): StoredInventoryItem =>
  Object.freeze({ ...item, tags: Object.freeze([...item.tags]) as string[] });

const compare = (a: string | number, b: string | number): number => (a < b ? -1 : a > b ? 1 : 0);

/** In-process inventory with the same semantics as the Cosmos adapter (unique sku, ETags, paging, the keys it can hold). */
export class MemoryInventoryRepository implements InventoryRepository {
  private readonly partitions = new Map<string, Partition>();

  private partition(wallet: string): Partition {
    let partition = this.partitions.get(wallet);
    if (!partition) this.partitions.set(wallet, (partition = { byId: new Map(), idBySku: new Map(), pages: newPageCache(), pagesByQuery: new WeakMap() }));
    return partition;
  }

  async get(wallet: string, id: string) {
    if (!storableKeys(wallet, id)) return undefined;
    return this.partitions.get(wallet)?.byId.get(id);
  }

  async findBySku(wallet: string, sku: string) {
    const partition = this.partitions.get(wallet);
    const id = partition?.idBySku.get(sku);
    return id === undefined ? undefined : partition!.byId.get(id);
  }

  private store(partition: Partition, item: StoredInventoryItem, previousSku?: string) {
    const owner = partition.idBySku.get(item.sku);
    if (owner !== undefined && owner !== item.id) throw new DuplicateKeyError('sku exists');
    if (previousSku !== undefined && previousSku !== item.sku) partition.idBySku.delete(previousSku);
    partition.idBySku.set(item.sku, item.id);
    partition.byId.set(item.id, { value: frozenCopy(item), etag: randomUUID() });
    partition.pages = newPageCache();
    partition.pagesByQuery = new WeakMap();
  }

  async create(item: StoredInventoryItem) {
    assertStorableKeys(item.wallet, item.id);
    const partition = this.partition(item.wallet);
    if (partition.byId.has(item.id)) throw new DuplicateKeyError('id exists');
    this.store(partition, item);
  }

  async replace(item: StoredInventoryItem, etag: string) {
    assertStorableKeys(item.wallet, item.id);
    const partition = this.partition(item.wallet);
    const current = partition.byId.get(item.id);
    if (!current || current.etag !== etag) throw new EtagMismatchError();
    this.store(partition, item, current.value.sku);
  }

  async delete(wallet: string, id: string) {
    if (!storableKeys(wallet, id)) return false;
    const partition = this.partitions.get(wallet);
    const current = partition?.byId.get(id);
    if (!current) return false;
    partition!.byId.delete(id);
    partition!.idBySku.delete(current.value.sku);
    partition!.pages = newPageCache();
    partition!.pagesByQuery = new WeakMap();
    return true;
  }

  async list(wallet: string, query: InventoryListQuery): Promise<Page> {
    const partition = this.partitions.get(wallet);
    if (!partition) return { items: [], total: 0 };
    const known = partition.pagesByQuery.get(query);
    if (known) return known;
    const key = JSON.stringify(query);
    let page = partition.pages.get(key)?.value;
    if (!page) partition.pages.set(key, (page = this.scan(partition, query)), 0);
    if (Object.isFrozen(query)) partition.pagesByQuery.set(query, page);
    return page;
  }

  private scan(partition: Partition, query: InventoryListQuery): Page {
    const direction = query.order === 'asc' ? 1 : -1;
    const matching: StoredInventoryItem[] = [];
    for (const row of partition.byId.values()) {
      if (matchesInventoryFilter(row.value, query)) matching.push(row.value);
    }
    matching.sort((a, b) => direction * (compare(a[query.sort], b[query.sort]) || compare(a.id, b.id)));
    const start = (query.page - 1) * query.limit;
    return Object.freeze({ items: Object.freeze(matching.slice(start, start + query.limit)), total: matching.length });
  }
}
