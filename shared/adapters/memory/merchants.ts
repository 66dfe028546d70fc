import { matchesDirectoryQuery, type DirectoryQuery } from '../../domain/directory';
import type { Merchant } from '../../domain/merchant';
import type { MerchantRepository } from '../../ports/merchants';
import { MemoryCollection } from './documents';

const bySlug = (a: Merchant, b: Merchant) => {
  const left = a.shop.directory.slug ?? '';
  const right = b.shop.directory.slug ?? '';
  return left < right ? -1 : left > right ? 1 : 0;
};

export class MemoryMerchantRepository extends MemoryCollection<Merchant> implements MerchantRepository {
  async listDirectory(query: DirectoryQuery) {
    return this.all()
      .filter((merchant) => matchesDirectoryQuery(merchant, query))
      .sort(bySlug)
      .slice(query.offset, query.offset + query.limit)
      .map(({ wallet, shop }) => ({ wallet, shop }));
  }
}
