import type { Subscription } from '../domain/subscription';

/** Subscription records (API keys); the clear key is never stored, only its SHA-256 hash. */
export interface SubscriptionRepository {
  get(id: string): Promise<Subscription | undefined>;
  /** The subscription id a key hash belongs to, if any. */
  findIdByKeyHash(keyHash: string): Promise<string | undefined>;
  /** Throws DuplicateKeyError when the id or the key hash exists. */
  create(subscription: Subscription, keyHash: string): Promise<void>;
  update(subscription: Subscription): Promise<void>;
  /** Records a use of the key (a single-field write: it never overwrites a concurrent revocation). */
  touch(id: string, at: number): Promise<void>;
  list(filter: { wallet?: string }): Promise<Subscription[]>;
}
