import type { Container } from '@azure/cosmos';
import type { DocumentCollection } from '../../ports/documents';
import { assertStorableKeys, storableKeys } from '../../ports/errors';
import type { ContainerSpec } from '../../registry';
import { cosmosCall, fromDocument, isNotFound, translateCosmosError, type CosmosStore } from './client';

/**
 * A document with `expiresAt` (Unix ms) is one the service stops reading then: Cosmos removes it some
 * time after (per-item `ttl`, in seconds; the container enables TTL with no default), so temporary
 * records (used nonces, sessions, tombstones) do not pile up.
 */
export const withTtl = <T extends object>(document: T, now = Date.now()): T => {
  const expiresAt = (document as { expiresAt?: unknown }).expiresAt;
  if (typeof expiresAt !== 'number' || !Number.isFinite(expiresAt)) return document;
  // A day of grace: clocks differ, and an expired record must still be readable as expired for a while.
  return { ...document, ttl: Math.max(1, Math.ceil((expiresAt - now) / 1000) + 86_400) };
};

/**
 * A Cosmos container as a DocumentCollection; the partition key value is passed with every call. A
 * key Cosmos cannot hold (`unstorableIdReason`) never reaches the SDK, which would throw for it (or,
 * for `..`, address another resource): reading or deleting it finds nothing, writing it is
 * UnstorableIdError, as on the memory store.
 */
export class CosmosCollection<T extends { id: string }> implements DocumentCollection<T> {
  protected readonly container: Container;

  constructor(store: CosmosStore, spec: ContainerSpec) {
    this.container = store.container(spec);
  }

  async get(partition: string, id: string) {
    if (!storableKeys(partition, id)) return undefined;
    try {
      const { resource } = await this.container.item(id, partition).read();
      return resource ? fromDocument<T>(resource) : undefined;
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw translateCosmosError(error);
    }
  }

  async create(partition: string, document: T) {
    assertStorableKeys(partition, document.id);
    const { etag } = await cosmosCall(() => this.container.items.create(withTtl(document)));
    return etag;
  }

  async replace(partition: string, document: T, etag: string) {
    assertStorableKeys(partition, document.id);
    const response = await cosmosCall(() =>
      this.container.item(document.id, partition).replace(withTtl(document), { accessCondition: { type: 'IfMatch', condition: etag } }),
    );
    return response.etag;
  }

  async upsert(partition: string, document: T) {
    assertStorableKeys(partition, document.id);
    const { etag } = await cosmosCall(() => this.container.items.upsert(withTtl(document)));
    return etag;
  }

  async delete(partition: string, id: string, etag?: string) {
    if (!storableKeys(partition, id)) return false;
    try {
      await this.container.item(id, partition).delete(etag ? { accessCondition: { type: 'IfMatch', condition: etag } } : {});
      return true;
    } catch (error) {
      if (isNotFound(error)) return false;
      throw translateCosmosError(error);
    }
  }
}
