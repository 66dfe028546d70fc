import type { DirectoryQuery } from '../domain/directory';
import type { Merchant } from '../domain/merchant';
import type { DocumentCollection } from './documents';

/** What the directory needs of a listed merchant document. */
export type DirectoryShop = Pick<Merchant, 'wallet' | 'shop'>;

/** Merchant documents by wallet, plus the directory's query. */
export interface MerchantRepository extends DocumentCollection<Merchant> {
  /**
   * Listed shops (`directoryListed`) matching the query's filters, ordered by slug, the window of
   * `limit` after the first `offset`: cross-partition, searched in the store.
   */
  listDirectory(query: DirectoryQuery): Promise<DirectoryShop[]>;
}
