import type { Container } from '@azure/cosmos';
import type { Subscription } from '../../domain/subscription';
import type { SubscriptionRepository } from '../../ports/subscription-repository';
import { containers } from '../../registry';
import { assertStorableKeys, storableKeys } from '../../ports/errors';
import { cosmosCall, fromDocument, isNotFound, translateCosmosError, type CosmosStore } from './client';

const keyClaimId = (keyHash: string) => `apikey:${keyHash}`;

/** Subscriptions by id; a create-only claim maps each key hash to its subscription. */
export class CosmosSubscriptionRepository implements SubscriptionRepository {
  private readonly subscriptions: Container;
  private readonly claims: Container;

  constructor(store: CosmosStore) {
    this.subscriptions = store.container(containers.subscriptions);
    this.claims = store.container(containers.claims);
  }

  private async read<T>(container: Container, id: string): Promise<T | undefined> {
    if (!storableKeys(id)) return undefined;
    try {
      const { resource } = await container.item(id, id).read();
      return resource ? fromDocument<T>(resource).value : undefined;
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw translateCosmosError(error);
    }
  }

  get(id: string) {
    return this.read<Subscription>(this.subscriptions, id);
  }

  async findIdByKeyHash(keyHash: string) {
    const claim = await this.read<{ owner: string }>(this.claims, keyClaimId(keyHash));
    return claim?.owner;
  }

  async create(subscription: Subscription, keyHash: string) {
    assertStorableKeys(subscription.id, keyClaimId(keyHash));
    await cosmosCall(() =>
      this.claims.items.create({ id: keyClaimId(keyHash), kind: 'apikey', owner: subscription.id, createdAt: subscription.createdAt }),
    );
    await cosmosCall(() => this.subscriptions.items.create(subscription));
  }

  async update(subscription: Subscription) {
    assertStorableKeys(subscription.id);
    await cosmosCall(() => this.subscriptions.items.upsert(subscription));
  }

  async touch(id: string, at: number) {
    if (!storableKeys(id)) return;
    try {
      await this.subscriptions.item(id, id).patch([{ op: 'set', path: '/lastUsedAt', value: at }]);
    } catch (error) {
      if (!isNotFound(error)) throw translateCosmosError(error);
    }
  }

  async list(filter: { wallet?: string }) {
    // Cross-partition by nature (keys are partitioned by id for the per-request point read); rare and small.
    const { resources } = await cosmosCall(() =>
      this.subscriptions.items
        .query<Record<string, unknown>>(
          filter.wallet
            ? { query: 'SELECT * FROM c WHERE c.wallet = @wallet', parameters: [{ name: '@wallet', value: filter.wallet }] }
            : 'SELECT * FROM c',
        )
        .fetchAll(),
    );
    return resources.map((document) => fromDocument<Subscription>(document).value).sort((a, b) => a.createdAt - b.createdAt);
  }
}
