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
