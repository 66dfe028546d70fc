import type { Plan } from '../domain/subscription';
import type { InventoryRepository } from '../ports/inventory-repository';
import type { Clock, HealthProbe, Ids, RateLimiter } from '../ports/runtime';
import type { SubscriptionRepository } from '../ports/subscription-repository';

/** Values from configuration that use cases and the HTTP layer need. */
export interface Settings {
  version: string;
  baseUrl: string;
  planQuotas: Record<Plan, number>;
  /** The secret an edge proxy injects; a client may not send another. */
  edgeSecret: string | undefined;
  /** How long a subscription record may be served from memory. */
  subscriptionCacheMs: number;
}

/** Everything a use case may call: ports only, built once per process by the composition root. */
export interface AppDeps {
  settings: Settings;
  clock: Clock;
  ids: Ids;
  inventory: InventoryRepository;
  subscriptions: SubscriptionRepository;
  rateLimiter: RateLimiter;
  probes: { store: HealthProbe; queue: HealthProbe };
}
