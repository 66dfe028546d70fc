/**
 * Create-only claims: a value made unique across the store (a nonce, a slug, a transaction hash, a
 * lock), owned by whoever creates its record first. Every claim is taken here, so the rule that a
 * claim is never overwritten, and what a clash answers, live in one place.
 */
import type { Versioned } from '../ports/inventory-repository';
import type { Claim, DocumentCollection } from '../ports/documents';
import { DuplicateKeyError } from '../ports/errors';

export type ClaimResult =
  /** This call created the record. */
  | { taken: true; etag: string }
  /** Someone holds it already: its record as it is now (undefined when it was released meanwhile). */
  | { taken: false; held: Versioned<Claim> | undefined };

/** Creates the claim's record unless it exists; any other store failure throws. */
export const takeClaim = async <T extends Claim>(claims: DocumentCollection<T>, claim: T): Promise<ClaimResult> => {
  try {
    return { taken: true, etag: await claims.create(claim.id, claim) };
  } catch (error) {
    if (!(error instanceof DuplicateKeyError)) throw error;
    return { taken: false, held: await claims.get(claim.id, claim.id) };
  }
};

/** Whether `claim.owner` holds the claim now: it took it with this call, or held it already. */
export const holdClaim = async <T extends Claim>(claims: DocumentCollection<T>, claim: T): Promise<boolean> => {
  const result = await takeClaim(claims, claim);
  return result.taken || result.held?.value.owner === claim.owner;
};
