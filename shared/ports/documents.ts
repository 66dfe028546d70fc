import type { Versioned } from './inventory-repository';

/**
 * One container of documents, addressed by partition key and id. Every write but `upsert` is
 * conditional: `create` never overwrites (DuplicateKeyError), `replace` and `delete` with an ETag
 * never lose a concurrent change (EtagMismatchError).
 */
export interface DocumentCollection<T extends { id: string }> {
  get(partition: string, id: string): Promise<Versioned<T> | undefined>;
  /** Answers the new ETag. */
  create(partition: string, document: T): Promise<string>;
  replace(partition: string, document: T, etag: string): Promise<string>;
  upsert(partition: string, document: T): Promise<string>;
  /** False when there was no such document. */
  delete(partition: string, id: string, etag?: string): Promise<boolean>;
}

/** A create-only record that makes a value unique across partitions and names its owner. */
export interface Claim {
  id: string;
  owner: string;
  createdAt: number;
  /** Unix ms after which the claim no longer counts (nonces); absent: forever. */
  expiresAt?: number;
  /** A counter's value, for records that count (a key's requests in a billing period). */
  count?: number;
}
