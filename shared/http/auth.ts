import type { AppDeps } from '../app/deps';
import { DomainError } from '../domain/errors';
import { hasScope, type Subscription } from '../domain/subscription';
import { SUBSCRIPTION_HEADER } from './headers';
import type { IncomingCall } from './function';
import type { RouteSpec } from './routes';

export interface Access {
  subscription: Subscription | undefined;
  /** The rate-limit headers of a `key` route, to send on every answer, 429 included. */
  headers: Record<string, string>;
  /** Set when the plan's quota is spent: the Unix ms when it renews. */
  limitedUntil?: number;
}

const cache = new WeakMap<AppDeps, Map<string, { at: number; subscription: Subscription | undefined }>>();

/** The subscription record behind a gateway-stamped id, kept in memory for a short while. */
const loadSubscription = async (deps: AppDeps, id: string): Promise<Subscription | undefined> => {
  let entries = cache.get(deps);
  if (!entries) cache.set(deps, (entries = new Map()));
  const now = deps.clock.now();
  const hit = entries.get(id);
  if (hit && now - hit.at < deps.settings.subscriptionCacheMs) return hit.subscription;
  const subscription = await deps.subscriptions.get(id);
  if (entries.size > 10_000) entries.clear();
  entries.set(id, { at: now, subscription });
  return subscription;
};

export const rateLimitHeaders = (decision: { limit: number; remaining: number; resetAt: number }) => ({
  'x-ratelimit-limit': String(decision.limit),
  'x-ratelimit-remaining': String(Math.max(0, decision.remaining)),
  'x-ratelimit-reset': String(decision.resetAt),
});

/**
 * Resolves who is calling from the gateway's `x-subscription-id` stamp (never from a client wallet),
 * then checks status (401) and scope (403), and counts the request against the plan's quota.
 */
export const authorize = async (deps: AppDeps, spec: RouteSpec, request: IncomingCall): Promise<Access> => {
  if (spec.auth.kind !== 'key') return { subscription: undefined, headers: {} };
  const id = request.headers.get(SUBSCRIPTION_HEADER);
  const subscription = id ? await loadSubscription(deps, id) : undefined;
  if (!subscription || subscription.status !== 'active') {
    throw new DomainError('unauthorized', 'missing or invalid subscription key');
  }
  if (!hasScope(subscription, spec.auth.scope)) {
    throw new DomainError('forbidden', `this key lacks the scope ${spec.auth.scope}`);
  }
  const decision = deps.rateLimiter.hit(subscription.id, deps.settings.planQuotas[subscription.plan], deps.clock.now());
  return { subscription, headers: rateLimitHeaders(decision), ...(!decision.allowed && { limitedUntil: decision.resetAt }) };
};
