import { DuplicateKeyError, EtagMismatchError } from '../ports/errors';

/**
 * Read-modify-write under an ETag, the one way every use case does it: read, decide, write guarded
 * by what was read; when another writer got there first (a clash), pause a little and start again
 * from the read, up to a limit, then answer what the caller says a lost race ends in.
 *
 * The default, used everywhere: up to 100 attempts, with a random pause before each new one of up
 * to min(20, 1 + attempts so far) ms. A writer loses a round only to a writer that won it, so N
 * writers of one document at once need at most N attempts each: 100 covers a burst of 100 (50
 * status reports for one receipt at once is a tested case), and the random pause spreads the losers
 * out so that they do not clash again in step.
 */
export const DEFAULT_ETAG_RETRY = {
  maxAttempts: 100,
  /** The pause, in ms, after `attempts` lost attempts and before the next. */
  backoff: (attempts: number): number => Math.random() * Math.min(20, 1 + attempts),
} as const;

/** A clash: the guarded write lost to another writer. */
export const isEtagMismatch = (error: unknown): boolean => error instanceof EtagMismatchError;

/** A clash of a write that replaces the document read, or creates the first one (another request created it meanwhile). */
export const isEtagMismatchOrDuplicate = (error: unknown): boolean => error instanceof EtagMismatchError || error instanceof DuplicateKeyError;

export interface EtagRetryOptions<T> {
  /** Attempts in all, the first one included. */
  maxAttempts?: number;
  /** The pause in ms before the next attempt, given how many were lost so far (1 after the first). */
  backoff?: (attempts: number) => number;
  /** Which errors of a guarded write are clashes (default: EtagMismatchError); any other error ends it all. */
  retryOn?: (error: unknown) => boolean;
  /** What losing the last attempt ends in: throw an error, or answer a value. */
  exhausted: () => T;
}

export interface EtagAttempt {
  /** 1 for the first attempt. */
  attempt: number;
  /**
   * Runs the guarded write. A clash (the options' `retryOn`, or this call's own) ends this attempt
   * and starts the next one from the top; any other error goes to the caller as it is. Only errors of
   * writes run through here count as clashes: a read or a decision that throws is never retried.
   */
  write<R>(operation: () => Promise<R>, retryOn?: (error: unknown) => boolean): Promise<R>;
  /** Ends this attempt as a clash the attempt recognised itself. */
  retry(): never;
}

class Clash {}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export const withEtagRetry = async <T>(run: (attempt: EtagAttempt) => Promise<T> | T, options: EtagRetryOptions<T>): Promise<T> => {
  const maxAttempts = options.maxAttempts ?? DEFAULT_ETAG_RETRY.maxAttempts;
  const backoff = options.backoff ?? DEFAULT_ETAG_RETRY.backoff;
  const clashes = options.retryOn ?? isEtagMismatch;
  const retry = (): never => {
    throw new Clash();
  };
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    const write = async <R>(operation: () => Promise<R>, retryOn = clashes): Promise<R> => {
      try {
        return await operation();
      } catch (error) {
        if (retryOn(error)) retry();
        throw error;
      }
    };
    try {
      return await run({ attempt, write, retry });
    } catch (error) {
      if (!(error instanceof Clash)) throw error;
    }
    if (attempt < maxAttempts) await pause(backoff(attempt));
  }
  return options.exhausted();
};
