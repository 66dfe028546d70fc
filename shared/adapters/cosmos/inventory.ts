import type { Container, SqlParameter, SqlQuerySpec } from '@azure/cosmos';
import type { InventoryListQuery, StoredInventoryItem } from '../../domain/inventory';
import type { InventoryRepository } from '../../ports/inventory-repository';
import { containers } from '../../registry';
import { cosmosCall, fromDocument, type CosmosStore } from './client';
import { CosmosCollection } from './documents';

/** The list filter as a Cosmos SQL WHERE clause over one merchant's partition. */
export const inventoryWhere = (wallet: string, query: InventoryListQuery): { where: string; parameters: SqlParameter[] } => {
  const clauses = ['c.wallet = @wallet'];
  const parameters: SqlParameter[] = [{ name: '@wallet', value: wallet }];
  const add = (clause: string, name: string, value: string | number | boolean) => {
    clauses.push(clause);
    parameters.push({ name, value });
  };
  if (query.q) add('CONTAINS(c.searchText, @q)', '@q', query.q);
  if (query.category !== undefined) add('c.category = @category', '@category', query.category);
  if (query.taxable !== 'any') add('c.taxable = @taxable', '@taxable', query.taxable === 'true');
  if (query.stock === 'in') clauses.push('c.stockQty != 0');
  if (query.stock === 'out') clauses.push('c.stockQty = 0');
  if (query.priceMin !== undefined) add('c.priceUsd >= @priceMin', '@priceMin', query.priceMin);
  if (query.priceMax !== undefined) add('c.priceUsd <= @priceMax', '@priceMax', query.priceMax);
  if (query.pack !== undefined) add('c.industryPack = @pack', '@pack', query.pack);
  if (query.tags.length > 0) {
    const tests = query.tags.map((tag, index) => {
      parameters.push({ name: `@tag${index}`, value: tag });
      return `ARRAY_CONTAINS(c.tags, @tag${index})`;
    });
    clauses.push(`(${tests.join(query.tagsMode === 'all' ? ' AND ' : ' OR ')})`);
  }
  return { where: clauses.join(' AND '), parameters };
};

export class CosmosInventoryRepository implements InventoryRepository {
  private readonly container: Container;

  /** Point reads and writes are those of any container; this class adds the inventory queries. */
  private readonly documents: CosmosCollection<StoredInventoryItem>;

  constructor(store: CosmosStore) {
    this.container = store.container(containers.inventory);
    this.documents = new CosmosCollection(store, containers.inventory);
  }

  get(wallet: string, id: string) {
    return this.documents.get(wallet, id);
  }

  async findBySku(wallet: string, sku: string) {
    const { resources } = await cosmosCall(() =>
      this.container.items
        .query(
          {
            // The wallet clause is not redundant: a partition-scoped query must never see another partition.
            query: 'SELECT * FROM c WHERE c.wallet = @wallet AND c.sku = @sku',
            parameters: [
              { name: '@wallet', value: wallet },
              { name: '@sku', value: sku },
            ],
          },
          { partitionKey: wallet },
        )
        .fetchAll(),
    );
    return resources[0] ? fromDocument<StoredInventoryItem>(resources[0]) : undefined;
  }

  async create(item: StoredInventoryItem) {
    await this.documents.create(item.wallet, item);
  }

  async replace(item: StoredInventoryItem, etag: string) {
    await this.documents.replace(item.wallet, item, etag);
  }

  delete(wallet: string, id: string) {
    return this.documents.delete(wallet, id);
  }

  async list(wallet: string, query: InventoryListQuery) {
    const { where, parameters } = inventoryWhere(wallet, query);
    const direction = query.order === 'asc' ? 'ASC' : 'DESC';
    const page: SqlQuerySpec = {
      query: `SELECT * FROM c WHERE ${where} ORDER BY c.${query.sort} ${direction}, c.id ${direction}`,
      parameters,
    };
    const count: SqlQuerySpec = { query: `SELECT VALUE COUNT(1) FROM c WHERE ${where}`, parameters };
    const [items, total] = await Promise.all([
      this.window(page, wallet, (query.page - 1) * query.limit, query.limit),
      cosmosCall(() => this.container.items.query<number>(count, { partitionKey: wallet }).fetchAll()).then(
        ({ resources }) => resources[0] ?? 0,
      ),
    ]);
    return { items, total };
  }

  /** Skips `skip` results by following continuation tokens (no OFFSET), then reads up to `take`. */
  private async window(spec: SqlQuerySpec, wallet: string, skip: number, take: number): Promise<StoredInventoryItem[]> {
    const items: StoredInventoryItem[] = [];
    let toSkip = skip;
    let continuationToken: string | undefined;
    do {
      const maxItemCount = toSkip > 0 ? toSkip : take - items.length;
      const response = await cosmosCall(() =>
        this.container.items.query(spec, { partitionKey: wallet, maxItemCount, continuationToken }).fetchNext(),
      );
      const batch = response.resources;
      if (toSkip > 0) {
        const skipped = Math.min(toSkip, batch.length);
        toSkip -= skipped;
        batch.splice(0, skipped);
      }
      for (const document of batch) items.push(fromDocument<StoredInventoryItem>(document).value);
      continuationToken = response.continuationToken;
    } while (continuationToken && items.length < take);
    return items.slice(0, take);
  }
}
