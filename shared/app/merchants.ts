import { DomainError } from '../domain/errors';
import { newMerchant, type Merchant } from '../domain/merchant';
import { EtagMismatchError, DuplicateKeyError } from '../ports/errors';
import type { AppDeps } from './deps';

type MerchantDeps = Pick<AppDeps, 'merchants' | 'clock'>;

/** The merchant's document, or a fresh default one (not stored until something changes). */
export const loadMerchant = async (deps: MerchantDeps, wallet: string): Promise<Merchant> =>
  (await deps.merchants.get(wallet, wallet))?.value ?? newMerchant(wallet, deps.clock.now());

const MAX_ATTEMPTS = 8;

/**
 * Read-modify-write of one merchant document under its ETag, retried when another write got there
 * first. `change` may throw to refuse; it must not have side effects it cannot repeat.
 */
export const updateMerchant = async <T>(
  deps: MerchantDeps,
  wallet: string,
  change: (merchant: Merchant, now: number) => Promise<{ merchant: Merchant; result: T }> | { merchant: Merchant; result: T },
): Promise<T> => {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const stored = await deps.merchants.get(wallet, wallet);
    const now = deps.clock.now();
    const { merchant, result } = await change(stored?.value ?? newMerchant(wallet, now), now);
    const next = { ...merchant, updatedAt: now };
    try {
      if (stored) await deps.merchants.replace(wallet, next, stored.etag);
      else await deps.merchants.create(wallet, next);
      return result;
    } catch (error) {
      if (error instanceof EtagMismatchError || error instanceof DuplicateKeyError) continue;
      throw error;
    }
  }
  throw new DomainError('conflict', 'the merchant record kept changing; try again');
};
