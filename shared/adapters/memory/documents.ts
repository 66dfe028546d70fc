import { randomUUID } from 'node:crypto';
import { DuplicateKeyError, EtagMismatchError, assertStorableKeys, storableKeys } from '../../ports/errors';
import type { DocumentCollection } from '../../ports/documents';
import type { Versioned } from '../../ports/inventory-repository';

/**
 * Documents in process, deep-copied in and out so callers never share state with the store. Keys are
 * held to Cosmos's rules (`unstorableIdReason`), with the answers both adapters give: a read or delete
 * of a key Cosmos cannot hold finds nothing, a write of one is UnstorableIdError.
 */
export class MemoryCollection<T extends { id: string }> implements DocumentCollection<T> {
  private readonly rows = new Map<string, Versioned<T>>();

  private key(partition: string, id: string) {
    return `${partition}\u0000${id}`;
  }

  async get(partition: string, id: string) {
    if (!storableKeys(partition, id)) return undefined;
    const row = this.rows.get(this.key(partition, id));
    return row && { value: structuredClone(row.value), etag: row.etag };
  }

  async create(partition: string, document: T) {
    assertStorableKeys(partition, document.id);
    const key = this.key(partition, document.id);
    if (this.rows.has(key)) throw new DuplicateKeyError();
    return this.write(key, document);
  }

  async replace(partition: string, document: T, etag: string) {
    assertStorableKeys(partition, document.id);
    const key = this.key(partition, document.id);
    if (this.rows.get(key)?.etag !== etag) throw new EtagMismatchError();
    return this.write(key, document);
  }

  async upsert(partition: string, document: T) {
    assertStorableKeys(partition, document.id);
    return this.write(this.key(partition, document.id), document);
  }

  async delete(partition: string, id: string, etag?: string) {
    if (!storableKeys(partition, id)) return false;
    const key = this.key(partition, id);
    const row = this.rows.get(key);
    if (!row) return false;
    if (etag !== undefined && row.etag !== etag) throw new EtagMismatchError();
    return this.rows.delete(key);
  }

  /** Every stored document (copies), for the in-process query adapters built on this one. */
  protected all(): T[] {
    return [...this.rows.values()].map((row) => structuredClone(row.value));
  }

  private write(key: string, document: T) {
    const etag = randomUUID();
    this.rows.set(key, { value: structuredClone(document), etag });
    return etag;
  }
}
