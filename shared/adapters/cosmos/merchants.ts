import type { SqlParameter } from '@azure/cosmos';
import type { DirectoryQuery } from '../../domain/directory';
import type { Merchant } from '../../domain/merchant';
import type { DirectoryShop, MerchantRepository } from '../../ports/merchants';
import { containers } from '../../registry';
import { cosmosCall, type CosmosStore } from './client';
import { CosmosCollection } from './documents';

/** The directory's filters as a Cosmos SQL WHERE clause (the twin of `matchesDirectoryQuery`). */
export const directoryWhere = (query: Pick<DirectoryQuery, 'q' | 'categories' | 'keywords'>): { where: string; parameters: SqlParameter[] } => {
  // A document without the field (written before it existed) is not listed: `undefined = true` is not true.
  const clauses = ['c.directoryListed = true'];
  const parameters: SqlParameter[] = [];
  if (query.q) {
    clauses.push('CONTAINS(c.directorySearchText, @q)');
    parameters.push({ name: '@q', value: query.q });
  }
  const anyOf = (field: 'categories' | 'keywords', values: string[]) => {
    if (values.length === 0) return;
    const tests = values.map((value, index) => {
      parameters.push({ name: `@${field}${index}`, value });
      return `ARRAY_CONTAINS(c.shop.directory.${field}, @${field}${index})`;
    });
    clauses.push(`(${tests.join(' OR ')})`);
  };
  anyOf('categories', query.categories);
  anyOf('keywords', query.keywords);
  return { where: clauses.join(' AND '), parameters };
};

export class CosmosMerchantRepository extends CosmosCollection<Merchant> implements MerchantRepository {
  constructor(store: CosmosStore) {
    super(store, containers.merchants);
  }

  /**
   * Cross-partition, ordered by slug (unique: slugs are claimed). The first offset + limit matches are
   * read (TOP; the local Cosmos server has no OFFSET … LIMIT, and Cosmos reads skipped rows with
   * OFFSET too) and the window is cut here; `offset` is bounded, so is the read.
   */
  async listDirectory(query: DirectoryQuery): Promise<DirectoryShop[]> {
    const { where, parameters } = directoryWhere(query);
    const { resources } = await cosmosCall(() =>
      this.container.items
        .query<DirectoryShop>({
          query: `SELECT TOP @n c.wallet, c.shop FROM c WHERE ${where} ORDER BY c.shop.directory.slug ASC`,
          parameters: [...parameters, { name: '@n', value: query.offset + query.limit }],
        })
        .fetchAll(),
    );
    return resources.slice(query.offset, query.offset + query.limit);
  }
}
