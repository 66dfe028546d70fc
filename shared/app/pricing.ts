import { DomainError } from '../domain/errors';
import { planPricesUsd, pricingId, type PricingConfig, type PricingUpdate } from '../domain/pricing';
import type { AppDeps } from './deps';
import { isEtagMismatchOrDuplicate, withEtagRetry } from './etag-retry';

type PricingDeps = Pick<AppDeps, 'platform' | 'settings' | 'clock'>;

/** The brand's pricing: what a platform admin set, else the configured defaults. */
export const currentPricing = async (deps: PricingDeps, brandKey: string): Promise<PricingConfig> => {
  const stored = await deps.platform.get(pricingId(brandKey), pricingId(brandKey));
  return stored?.value ?? { id: pricingId(brandKey), brandKey, ...deps.settings.defaultPricing, updatedAt: null };
};

const view = (deps: PricingDeps, pricing: PricingConfig) => ({
  brandKey: pricing.brandKey,
  platformFeeBps: pricing.platformFeeBps,
  partnerFeeBps: pricing.partnerFeeBps,
  plans: Object.fromEntries(
    Object.entries(planPricesUsd).map(([plan, priceUsd]) => [
      plan,
      { priceUsd, requestsPerMinute: deps.settings.planQuotas[plan as keyof typeof planPricesUsd] },
    ]),
  ),
});

export const getPricingConfig = async (deps: PricingDeps, brandKey: string) => view(deps, await currentPricing(deps, brandKey));

/** Platform admin: new fees for future splits (deployed splits are immutable and keep theirs). */
export const updatePricingConfig = async (deps: PricingDeps, update: PricingUpdate) => {
  const brandKey = update.brandKey ?? deps.settings.brandKey;
  return withEtagRetry(
    async ({ write }) => {
      const id = pricingId(brandKey);
      const stored = await deps.platform.get(id, id);
      const current = stored?.value ?? (await currentPricing(deps, brandKey));
      const next: PricingConfig = {
        ...current,
        ...(update.platformFeeBps !== undefined && { platformFeeBps: update.platformFeeBps }),
        ...(update.partnerFeeBps !== undefined && { partnerFeeBps: update.partnerFeeBps }),
        ...(update.partnerWallet !== undefined && { partnerWallet: update.partnerWallet }),
        updatedAt: deps.clock.now(),
      };
      if (next.platformFeeBps + next.partnerFeeBps >= 10_000) {
        throw new DomainError('invalid_input', 'partnerFeeBps: platform and partner fees together must stay below 10000 bps (the merchant keeps a share)', { field: 'partnerFeeBps' });
      }
      if (next.partnerFeeBps > 0 && !next.partnerWallet) {
        throw new DomainError('invalid_input', 'partnerWallet: a partner fee needs a partner wallet to pay', { field: 'partnerWallet' });
      }
      await write(() => (stored ? deps.platform.replace(id, next, stored.etag) : deps.platform.create(id, next)));
      return { ok: true as const, ...view(deps, next), partnerWallet: next.partnerWallet };
    },
    {
      retryOn: isEtagMismatchOrDuplicate,
      exhausted: () => {
        throw new DomainError('conflict', 'pricing kept changing; try again');
      },
    },
  );
};
