import { DomainError } from '../domain/errors';
import { ID_PATTERN } from '../domain/query-params';
import { API_KEY_PREFIX_LENGTH, hashApiKey, toKeyView, type Plan, type Scope, type Subscription } from '../domain/subscription';
import type { AppDeps } from './deps';

export interface CreateApiKeyInput {
  wallet: string;
  scopes: Scope[];
  plan: Plan;
  brand: string;
}

/**
 * Creates a subscription and its key: the gateway issues the key (API Management in Azure), the
 * record keeps wallet, scopes and plan. The clear key is in this result and nowhere else, ever.
 */
export const createApiKey = async (
  deps: Pick<AppDeps, 'subscriptions' | 'keyIssuer' | 'secretBox' | 'clock' | 'ids'>,
  input: CreateApiKeyInput,
): Promise<{ subscription: Subscription; apiKey: string }> => {
  const id = `sub_${deps.ids.random(10)}`;
  const { apiKey } = await deps.keyIssuer.issue({ subscriptionId: id, plan: input.plan, wallet: input.wallet, displayName: `${input.wallet} ${input.plan}` });
  const subscription: Subscription = {
    id,
    wallet: input.wallet,
    scopes: input.scopes,
    plan: input.plan,
    brand: input.brand,
    status: 'active',
    keyPrefix: apiKey.slice(0, API_KEY_PREFIX_LENGTH),
    createdAt: deps.clock.now(),
    revokedAt: null,
    signingKey: deps.secretBox.seal(apiKey),
  };
  try {
    await deps.subscriptions.create(subscription, hashApiKey(apiKey));
  } catch (error) {
    // A key nobody holds a record for must not stay live at the gateway.
    await deps.keyIssuer.revoke(id).catch(() => {});
    throw error;
  }
  return { subscription, apiKey };
};

export const listApiKeys = (deps: Pick<AppDeps, 'subscriptions'>, filter: { wallet?: string } = {}) =>
  deps.subscriptions.list(filter);

export const revokeApiKey = async (
  deps: Pick<AppDeps, 'subscriptions' | 'keyIssuer' | 'clock'>,
  id: string,
  owner?: string,
): Promise<Subscription> => {
  const subscription = ID_PATTERN.test(id) ? await deps.subscriptions.get(id) : undefined;
  if (!subscription || (owner !== undefined && subscription.wallet !== owner)) {
    throw new DomainError('not_found', `subscription ${id} not found`);
  }
  if (subscription.status === 'revoked') return subscription;
  const revoked: Subscription = { ...subscription, status: 'revoked', revokedAt: deps.clock.now() };
  await deps.subscriptions.update(revoked);
  await deps.keyIssuer.revoke(id);
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

/** A signed-in merchant's new key. The development plan (no real quota) exists only on a development stack. */
export const createMerchantKey = async (
  deps: Pick<AppDeps, 'subscriptions' | 'keyIssuer' | 'secretBox' | 'clock' | 'ids' | 'settings'>,
  wallet: string,
  input: { scopes: Scope[]; plan: Plan },
) => {
  if (input.plan === 'development' && !deps.settings.development) {
    throw new DomainError('invalid_input', 'plan: must be starter, pro or enterprise', { field: 'plan' });
  }
  const { subscription, apiKey } = await createApiKey(deps, { wallet, scopes: input.scopes, plan: input.plan, brand: deps.settings.brandKey });
  return { ok: true as const, apiKey, key: toKeyView(subscription) };
};

export const listMerchantKeys = async (deps: Pick<AppDeps, 'subscriptions'>, wallet: string) => ({
  keys: (await deps.subscriptions.list({ wallet })).map(toKeyView),
});

export const revokeMerchantKey = async (deps: Pick<AppDeps, 'subscriptions' | 'keyIssuer' | 'clock'>, wallet: string, id: string) => {
  await revokeApiKey(deps, id, wallet);
  return { ok: true as const, id };
};
