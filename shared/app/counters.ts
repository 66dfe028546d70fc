import { EtagMismatchError, DuplicateKeyError } from '../ports/errors';
import type { AppDeps } from './deps';

const MAX_ATTEMPTS = 20;

/**
 * Takes one unit of a shared budget (a count in a claims document, changed under its ETag), or
 * answers false when `limit` units are taken. Concurrent callers never take more than `limit`.
 */
export const takeFromBudget = async (deps: Pick<AppDeps, 'claims' | 'clock'>, id: string, limit: number, expiresAt: number): Promise<boolean> => {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const stored = await deps.claims.get(id, id);
    const used = stored ? Number(stored.value.owner) : 0;
    if (used >= limit) return false;
    const next = { id, owner: String(used + 1), createdAt: stored?.value.createdAt ?? deps.clock.now(), expiresAt };
    try {
      if (stored) await deps.claims.replace(id, next, stored.etag);
      else await deps.claims.create(id, next);
      return true;
    } catch (error) {
      if (!(error instanceof EtagMismatchError || error instanceof DuplicateKeyError)) throw error;
    }
  }
  return false;
};

/** Gives back a unit taken for work that did not happen (best effort). */
export const returnToBudget = async (deps: Pick<AppDeps, 'claims'>, id: string): Promise<void> => {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const stored = await deps.claims.get(id, id);
    if (!stored || Number(stored.value.owner) <= 0) return;
    try {
      await deps.claims.replace(id, { ...stored.value, owner: String(Number(stored.value.owner) - 1) }, stored.etag);
      return;
    } catch (error) {
      if (!(error instanceof EtagMismatchError)) throw error;
    }
  }
};
