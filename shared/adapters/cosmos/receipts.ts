import type { SqlParameter } from '@azure/cosmos';
import { decodeCursor, encodeCursor } from '../../domain/cursor';
import type { Receipt, ReceiptStatus } from '../../domain/receipt';
import type { ReceiptListFilter, ReceiptRepository, ReceiptStatusQuery } from '../../ports/receipts';
import { containers } from '../../registry';
import { cosmosCall, fromDocument, type CosmosStore } from './client';
import { CosmosCollection } from './documents';

export class CosmosReceiptRepository extends CosmosCollection<Receipt> implements ReceiptRepository {
  constructor(store: CosmosStore) {
    super(store, containers.receipts);
  }

  /** Keyset paging on (createdAt, id), newest first: one partition, stable under concurrent writes. */
  async listByWallet(wallet: string, query: ReceiptListFilter) {
    const clauses = ['c.wallet = @wallet'];
    const parameters: SqlParameter[] = [{ name: '@wallet', value: wallet }, { name: '@n', value: query.limit + 1 }];
    if (query.status) {
      clauses.push('c.status = @status');
      parameters.push({ name: '@status', value: query.status });
    }
    if (query.createdBy !== undefined) {
      clauses.push('c.createdBy = @createdBy');
      parameters.push({ name: '@createdBy', value: query.createdBy });
    }
    if (query.cursor) {
      const after = decodeCursor(query.cursor);
      clauses.push('(c.createdAt < @t OR (c.createdAt = @t AND c.id < @id))');
      parameters.push({ name: '@t', value: after.createdAt }, { name: '@id', value: after.id });
    }
    const { resources } = await cosmosCall(() =>
      this.container.items
        .query<Record<string, unknown>>(
          { query: `SELECT TOP @n * FROM c WHERE ${clauses.join(' AND ')} ORDER BY c.createdAt DESC, c.id DESC`, parameters },
          { partitionKey: wallet },
        )
        .fetchAll(),
    );
    const found = resources.map((document) => fromDocument<Receipt>(document).value);
    const receipts = found.slice(0, query.limit);
    const last = receipts.at(-1);
    return { receipts, nextCursor: found.length > query.limit && last ? encodeCursor(last.createdAt, last.id) : null };
  }

  async withPendingEvents(limit: number) {
    const { resources } = await cosmosCall(() =>
      this.container.items
        .query<Record<string, unknown>>({
          query: 'SELECT TOP @n * FROM c WHERE ARRAY_LENGTH(c.pendingEvents) > 0',
          parameters: [{ name: '@n', value: limit }],
        })
        .fetchAll(),
    );
    return resources.map((document) => fromDocument<Receipt>(document).value);
  }

  async inStatuses(statuses: readonly ReceiptStatus[], query: ReceiptStatusQuery) {
    const parameters: SqlParameter[] = [{ name: '@n', value: query.limit }, { name: '@statuses', value: [...statuses] }];
    const clauses = ['ARRAY_CONTAINS(@statuses, c.status)'];
    if (query.createdBefore !== undefined) {
      clauses.push('c.createdAt < @before');
      parameters.push({ name: '@before', value: query.createdBefore });
    }
    if (query.paidBeforeWithoutStock !== undefined) {
      clauses.push('c.paidAt > 0 AND c.paidAt < @paidBefore AND (NOT IS_DEFINED(c.stock) OR c.stock = null)');
      parameters.push({ name: '@paidBefore', value: query.paidBeforeWithoutStock });
    }
    const { resources } = await cosmosCall(() =>
      this.container.items
        .query<Record<string, unknown>>({ query: `SELECT TOP @n * FROM c WHERE ${clauses.join(' AND ')} ORDER BY c.createdAt ASC`, parameters })
        .fetchAll(),
    );
    return resources.map((document) => fromDocument<Receipt>(document).value);
  }

  /** Cross-partition; the composite index (wallet ascending, createdAt descending) serves the order. */
  async inStatusesByWallet(statuses: readonly ReceiptStatus[], query: { afterWallet?: string; limit: number }) {
    const parameters: SqlParameter[] = [
      { name: '@n', value: query.limit },
      { name: '@statuses', value: [...statuses] },
      { name: '@after', value: query.afterWallet ?? '' },
    ];
    const { resources } = await cosmosCall(() =>
      this.container.items
        .query<Record<string, unknown>>({
          query: 'SELECT TOP @n * FROM c WHERE ARRAY_CONTAINS(@statuses, c.status) AND c.wallet > @after ORDER BY c.wallet ASC, c.createdAt DESC',
          parameters,
        })
        .fetchAll(),
    );
    return resources.map((document) => fromDocument<Receipt>(document).value);
  }
}
