import { randomUUID } from 'node:crypto';
import { matchesInventoryFilter, type InventoryListQuery, type StoredInventoryItem } from '../../domain/inventory';
import { DuplicateKeyError, EtagMismatchError } from '../../ports/errors';
import type { InventoryRepository, Versioned } from '../../ports/inventory-repository';

type Row = Versioned<StoredInventoryItem>;

const compare = (a: string | number, b: string | number): number => (a < b ? -1 : a > b ? 1 : 0);

/** In-process inventory with the same semantics as the Cosmos adapter (unique sku, ETags, paging). */
export class MemoryInventoryRepository implements InventoryRepository {
  private readonly partitions = new Map<string, Map<string, Row>>();

  private partition(wallet: string): Map<string, Row> {
    let rows = this.partitions.get(wallet);
    if (!rows) this.partitions.set(wallet, (rows = new Map()));
    return rows;
  }

  private copy(row: Row | undefined): Row | undefined {
    return row && { value: structuredClone(row.value), etag: row.etag };
  }

  async get(wallet: string, id: string) {
    return this.copy(this.partitions.get(wallet)?.get(id));
  }

  async findBySku(wallet: string, sku: string) {
    for (const row of this.partitions.get(wallet)?.values() ?? []) if (row.value.sku === sku) return this.copy(row);
    return undefined;
  }

  private assertSkuFree(rows: Map<string, Row>, item: StoredInventoryItem) {
    for (const row of rows.values()) {
      if (row.value.sku === item.sku && row.value.id !== item.id) throw new DuplicateKeyError('sku exists');
    }
  }

  async create(item: StoredInventoryItem) {
    const rows = this.partition(item.wallet);
    if (rows.has(item.id)) throw new DuplicateKeyError('id exists');
    this.assertSkuFree(rows, item);
    rows.set(item.id, { value: structuredClone(item), etag: randomUUID() });
  }

  async replace(item: StoredInventoryItem, etag: string) {
    const rows = this.partition(item.wallet);
    const current = rows.get(item.id);
    if (!current || current.etag !== etag) throw new EtagMismatchError();
    this.assertSkuFree(rows, item);
    rows.set(item.id, { value: structuredClone(item), etag: randomUUID() });
  }

  async delete(wallet: string, id: string) {
    return this.partitions.get(wallet)?.delete(id) ?? false;
  }

  async list(wallet: string, query: InventoryListQuery) {
    const direction = query.order === 'asc' ? 1 : -1;
    const matching = [...(this.partitions.get(wallet)?.values() ?? [])]
      .map((row) => row.value)
      .filter((item) => matchesInventoryFilter(item, query))
      .sort((a, b) => direction * (compare(a[query.sort], b[query.sort]) || compare(a.id, b.id)));
    const start = (query.page - 1) * query.limit;
    return { items: matching.slice(start, start + query.limit).map((item) => structuredClone(item)), total: matching.length };
  }
}
