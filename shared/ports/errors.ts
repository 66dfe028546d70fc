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
