import type { Subscription } from '../../domain/subscription';
import { DuplicateKeyError, assertStorableKeys, storableKeys } from '../../ports/errors';
import type { SubscriptionRepository } from '../../ports/subscription-repository';

/** Subscriptions in process, keyed as the Cosmos adapter keys them (by id, held to the same key rules). */
export class MemorySubscriptionRepository implements SubscriptionRepository {
  private readonly byId = new Map<string, Subscription>();
  private readonly idByKeyHash = new Map<string, string>();

  async get(id: string) {
    if (!storableKeys(id)) return undefined;
    const found = this.byId.get(id);
    return found && structuredClone(found);
  }

  async findIdByKeyHash(keyHash: string) {
    return this.idByKeyHash.get(keyHash);
  }

  async create(subscription: Subscription, keyHash: string) {
    assertStorableKeys(subscription.id);
    if (this.byId.has(subscription.id) || this.idByKeyHash.has(keyHash)) throw new DuplicateKeyError();
    this.byId.set(subscription.id, structuredClone(subscription));
    this.idByKeyHash.set(keyHash, subscription.id);
  }

  async update(subscription: Subscription) {
    assertStorableKeys(subscription.id);
    this.byId.set(subscription.id, structuredClone(subscription));
  }

  async touch(id: string, at: number) {
    const found = this.byId.get(id);
    if (found) found.lastUsedAt = at;
  }

  async list(filter: { wallet?: string }) {
    return [...this.byId.values()]
      .filter((s) => filter.wallet === undefined || s.wallet === filter.wallet)
      .sort((a, b) => a.createdAt - b.createdAt)
      .map((s) => structuredClone(s));
  }
}
