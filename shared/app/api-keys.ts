import { DomainError } from '../domain/errors';
import { API_KEY_PREFIX_LENGTH, hashApiKey, type Plan, type Scope, type Subscription } from '../domain/subscription';
import type { AppDeps } from './deps';

export interface CreateApiKeyInput {
  wallet: string;
  scopes: Scope[];
  plan: Plan;
  brand: string;
}

/** Creates a subscription and its key. The clear key is in this result and nowhere else, ever. */
export const createApiKey = async (
  deps: Pick<AppDeps, 'subscriptions' | 'clock' | 'ids'>,
  input: CreateApiKeyInput,
): Promise<{ subscription: Subscription; apiKey: string }> => {
  const apiKey = deps.ids.apiKey();
  const subscription: Subscription = {
    id: `sub_${deps.ids.random(10)}`,
    wallet: input.wallet,
    scopes: input.scopes,
    plan: input.plan,
    brand: input.brand,
    status: 'active',
    keyPrefix: apiKey.slice(0, API_KEY_PREFIX_LENGTH),
    createdAt: deps.clock.now(),
    revokedAt: null,
  };
  await deps.subscriptions.create(subscription, hashApiKey(apiKey));
  return { subscription, apiKey };
};

export const listApiKeys = (deps: Pick<AppDeps, 'subscriptions'>, filter: { wallet?: string } = {}) =>
  deps.subscriptions.list(filter);

export const revokeApiKey = async (
  deps: Pick<AppDeps, 'subscriptions' | 'clock'>,
  id: string,
  owner?: string,
): Promise<Subscription> => {
  const subscription = await deps.subscriptions.get(id);
  if (!subscription || (owner !== undefined && subscription.wallet !== owner)) {
    throw new DomainError('not_found', `subscription ${id} not found`);
  }
  if (subscription.status === 'revoked') return subscription;
  const revoked: Subscription = { ...subscription, status: 'revoked', revokedAt: deps.clock.now() };
  await deps.subscriptions.update(revoked);
  return revoked;
};

/** The active subscription a clear key belongs to, or undefined. */
export const findSubscriptionByKey = async (
  deps: Pick<AppDeps, 'subscriptions'>,
  apiKey: string,
): Promise<Subscription | undefined> => {
  const id = await deps.subscriptions.findIdByKeyHash(hashApiKey(apiKey));
  const subscription = id ? await deps.subscriptions.get(id) : undefined;
  return subscription?.status === 'active' ? subscription : undefined;
};
