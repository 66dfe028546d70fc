import { DomainError } from '../domain/errors';
import { unstorableIdReason } from '../domain/ids';

/** Typed failures every store adapter reports the same way, whatever the technology behind it. */
export class DuplicateKeyError extends Error {
  constructor(message = 'a document with this key already exists') {
    super(message);
    this.name = 'DuplicateKeyError';
  }
}

export class EtagMismatchError extends Error {
  constructor(message = 'the document changed since it was read') {
    super(message);
    this.name = 'EtagMismatchError';
  }
}

export class StoreUnavailableError extends Error {
  constructor(message = 'the document store is unavailable', options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreUnavailableError';
  }
}

/**
 * The store is reachable but refuses more work for now (Cosmos 429 after the SDK's own retries). Not an
 * outage: writes are not accepted into the outbox; the caller is told when to come back.
 */
export class StoreThrottledError extends Error {
  constructor(
    readonly retryAfterMs: number,
    options?: { cause?: unknown },
  ) {
    super('the document store is throttling requests', options);
    this.name = 'StoreThrottledError';
  }
}

/** Another service the call needs (the key gateway, the chain) is unreachable or failing: try again later. */
export class DependencyUnavailableError extends Error {
  constructor(
    readonly dependency: string,
    message: string,
  ) {
    super(message);
    this.name = 'DependencyUnavailableError';
  }
}

/**
 * A write names an id or partition key value the store cannot hold (`unstorableIdReason`). The
 * caller's bad input (400 invalid_input; the outbox rejects it rather than retrying), never a server
 * fault. Reads and deletes of such an id answer "no such document" instead: it cannot exist.
 */
export class UnstorableIdError extends DomainError {
  constructor(reason: string) {
    super('invalid_input', `id: ${reason}`, { field: 'id' });
    this.name = 'UnstorableIdError';
  }
}

/** Whether the store can hold every one of these keys (a point read or delete of any other finds nothing). */
export const storableKeys = (...keys: string[]): boolean => keys.every((key) => unstorableIdReason(key) === null);

/** Throws UnstorableIdError for the first key the store cannot hold (before a write). */
export const assertStorableKeys = (...keys: string[]): void => {
  for (const key of keys) {
    const reason = unstorableIdReason(key);
    if (reason !== null) throw new UnstorableIdError(reason);
  }
};
