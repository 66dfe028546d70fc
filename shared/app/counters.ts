import type { AppDeps } from './deps';
import { isEtagMismatchOrDuplicate, withEtagRetry } from './etag-retry';

/**
 * Takes one unit of a shared budget (a count in a claims document, changed under its ETag), or
 * answers false when `limit` units are taken. Concurrent callers never take more than `limit`.
 */
export const takeFromBudget = (deps: Pick<AppDeps, 'claims' | 'clock'>, id: string, limit: number, expiresAt: number): Promise<boolean> =>
  withEtagRetry(
    async ({ write }) => {
      const stored = await deps.claims.get(id, id);
      const used = stored ? Number(stored.value.owner) : 0;
      if (used >= limit) return false;
      const next = { id, owner: String(used + 1), createdAt: stored?.value.createdAt ?? deps.clock.now(), expiresAt };
      await write(() => (stored ? deps.claims.replace(id, next, stored.etag) : deps.claims.create(id, next)));
      return true;
    },
    // Still clashing after every attempt: nothing taken.
    { retryOn: isEtagMismatchOrDuplicate, exhausted: () => false },
  );

/** Gives back a unit taken for work that did not happen (best effort). */
export const returnToBudget = (deps: Pick<AppDeps, 'claims'>, id: string): Promise<void> =>
  withEtagRetry(
    async ({ write }) => {
      const stored = await deps.claims.get(id, id);
      if (!stored || Number(stored.value.owner) <= 0) return;
      await write(() => deps.claims.replace(id, { ...stored.value, owner: String(Number(stored.value.owner) - 1) }, stored.etag));
    },
    { exhausted: () => undefined },
  );
