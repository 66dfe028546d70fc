import { withDirectoryFields } from '../domain/directory';
import { DomainError } from '../domain/errors';
import { newMerchant, type Merchant } from '../domain/merchant';
import type { AppDeps } from './deps';
import { isEtagMismatchOrDuplicate, withEtagRetry } from './etag-retry';

type MerchantDeps = Pick<AppDeps, 'merchants' | 'clock'>;

/** The merchant's document, or a fresh default one (not stored until something changes). */
export const loadMerchant = async (deps: MerchantDeps, wallet: string): Promise<Merchant> =>
  (await deps.merchants.get(wallet, wallet))?.value ?? newMerchant(wallet, deps.clock.now());

/**
 * Read-modify-write of one merchant document under its ETag, retried when another write got there
 * first (a changed document, or a first document another request created). `change` may throw to
 * refuse; it must not have side effects it cannot repeat. Every merchant write goes through here, so
 * the directory fields derived from the shop and the split are written with them, whatever changed.
 */
export const updateMerchant = async <T>(
  deps: MerchantDeps,
  wallet: string,
  change: (merchant: Merchant, now: number) => Promise<{ merchant: Merchant; result: T }> | { merchant: Merchant; result: T },
): Promise<T> =>
  withEtagRetry(
    async ({ write }) => {
      const stored = await deps.merchants.get(wallet, wallet);
      const now = deps.clock.now();
      const { merchant, result } = await change(stored?.value ?? newMerchant(wallet, now), now);
      const next = withDirectoryFields({ ...merchant, updatedAt: now });
      await write(() => (stored ? deps.merchants.replace(wallet, next, stored.etag) : deps.merchants.create(wallet, next)));
      return result;
    },
    {
      retryOn: isEtagMismatchOrDuplicate,
      exhausted: () => {
        throw new DomainError('conflict', 'the merchant record kept changing; try again');
      },
    },
  );
