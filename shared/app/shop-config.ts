import { DomainError } from '../domain/errors';
import { slugClaimId, type ShopConfig, type ShopConfigUpdate } from '../domain/shop';
import { webhookTargetProblem } from '../domain/webhook-target';
import type { AppDeps } from './deps';
import { loadMerchant, updateMerchant } from './merchants';
import { withNewWebhookSecret } from './webhook-secrets';
import { takeClaim } from './claims';

type ShopDeps = Pick<AppDeps, 'merchants' | 'claims' | 'clock' | 'settings'>;

/** Groups added since a document was written read as their defaults. */
const withNewGroups = (shop: ShopConfig): ShopConfig => ({ ...shop, reserveRatios: shop.reserveRatios ?? null });

export const getShopConfig = async (deps: ShopDeps, wallet: string): Promise<{ config: ShopConfig }> => ({
  config: withNewGroups((await loadMerchant(deps, wallet)).shop),
});

/** Reserve ratios may name only the tokens this deployment accepts (a token it does not take could never be paid in). */
const checkReserveRatios = (deps: ShopDeps, ratios: ShopConfigUpdate['reserveRatios']) => {
  if (!ratios) return;
  const accepted = deps.settings.tokens.map((token) => token.symbol as string);
  for (const symbol of Object.keys(ratios)) {
    if (!accepted.includes(symbol)) {
      const field = `reserveRatios.${symbol}`;
      throw new DomainError('invalid_input', `${field}: this deployment does not accept ${symbol} (it accepts ${accepted.join(', ') || 'no tokens'})`, { field });
    }
  }
};

/** Makes `slug` this wallet's, across all merchants; another owner → 409 slug_taken. */
const claimSlug = async (deps: ShopDeps, wallet: string, slug: string): Promise<boolean> => {
  const claimed = await takeClaim(deps.claims, { id: slugClaimId(slug), owner: wallet, createdAt: deps.clock.now() });
  if (claimed.taken) return true;
  if (claimed.held?.value.owner === wallet) return false;
  throw new DomainError('slug_taken', `the shop address ${slug} is taken`, { field: 'directory.slug' });
};

const releaseSlug = async (deps: ShopDeps, wallet: string, slug: string) => {
  const id = slugClaimId(slug);
  const existing = await deps.claims.get(id, id);
  if (existing?.value.owner === wallet) await deps.claims.delete(id, id, existing.etag).catch(() => false);
};

/**
 * Replaces the groups the update names; claims a new directory slug first and releases the old one
 * after. A webhook URL set on a shop without a webhook signing secret makes one: in this answer
 * (`webhookSecret`) and nowhere else, as a new API key is shown.
 */
export const updateShopConfig = async (
  deps: ShopDeps & Pick<AppDeps, 'secretBox' | 'ids'>,
  wallet: string,
  update: ShopConfigUpdate,
): Promise<{ ok: true; config: ShopConfig; webhookSecret?: string }> => {
  if (update.webhookUrl) {
    const problem = webhookTargetProblem(update.webhookUrl, deps.settings.development);
    if (problem) throw new DomainError('invalid_input', `webhookUrl: ${problem}`, { field: 'webhookUrl' });
  }
  checkReserveRatios(deps, update.reserveRatios);
  const wantedSlug = update.directory?.slug ?? null;
  const claimedNow = wantedSlug ? await claimSlug(deps, wallet, wantedSlug) : false;
  let previousSlug: string | null = null;
  try {
    const { config, webhookSecret } = await updateMerchant(deps, wallet, (merchant, now) => {
      previousSlug = merchant.shop.directory.slug;
      const shop: ShopConfig = withNewGroups({ ...merchant.shop, ...update, updatedAt: now });
      const signed = update.webhookUrl && !merchant.webhookSigning ? withNewWebhookSecret(deps, merchant, now) : undefined;
      return { merchant: { ...(signed?.merchant ?? merchant), shop }, result: { config: shop, webhookSecret: signed?.secret } };
    });
    if (update.directory && previousSlug && previousSlug !== wantedSlug) await releaseSlug(deps, wallet, previousSlug);
    return { ok: true, config, ...(webhookSecret && { webhookSecret }) };
  } catch (error) {
    if (claimedNow && wantedSlug) await releaseSlug(deps, wallet, wantedSlug);
    throw error;
  }
};
