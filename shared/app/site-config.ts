import { DomainError } from '../domain/errors';
import { slugClaimId } from '../domain/shop';
import { taxCatalog } from '../domain/tax-catalog';
import type { AppDeps } from './deps';
import { loadMerchant } from './merchants';

/** What a payment page needs before it knows anything else: brand, chain and tokens, and the shop's look. */
export const getSiteConfig = async (deps: Pick<AppDeps, 'settings' | 'claims' | 'merchants' | 'clock'>, slug: string | undefined) => {
  const site = {
    brandKey: deps.settings.brandKey,
    brandName: deps.settings.brandName,
    chainId: deps.settings.chainId,
    tokens: deps.settings.tokens,
  };
  if (!slug) return site;
  const claim = await deps.claims.get(slugClaimId(slug), slugClaimId(slug));
  if (!claim) throw new DomainError('not_found', `no shop ${slug}`);
  const { shop } = await loadMerchant(deps, claim.value.owner);
  return {
    ...site,
    shop: { slug, name: shop.branding.name, branding: shop.branding, layout: shop.layout, processingFeePct: shop.processingFeePct },
  };
};

export const getTaxCatalog = () => taxCatalog;
