import { DomainError } from '../domain/errors';
import type { MerchantSplit, SplitRecipient } from '../domain/merchant';
import { DAY_MS, SPLIT_DEPLOYMENTS_PER_DAY, sameRecipients, splitRecipients, toSplitView } from '../domain/split';
import { DependencyUnavailableError } from '../ports/errors';
import type { Chain, DeployedSplit } from '../ports/chain';
import type { AppDeps } from './deps';
import { loadMerchant, updateMerchant } from './merchants';
import { takeFromBudget, returnToBudget } from './counters';
import { currentPricing } from './pricing';

type SplitDeps = Pick<AppDeps, 'merchants' | 'platform' | 'settings' | 'clock' | 'chain' | 'claims'>;

const chainOf = (deps: Pick<AppDeps, 'chain'>): Chain => {
  if (!deps.chain) throw new DependencyUnavailableError('chain', 'no chain is configured (CHAIN_RPC_URL)');
  return deps.chain;
};

/** Who a split deployed now pays: the merchant, and the platform and partner at today's fees. */
export const expectedRecipients = async (deps: Pick<AppDeps, 'platform' | 'settings' | 'clock'>, wallet: string): Promise<SplitRecipient[]> => {
  const platformWallet = deps.settings.platformWallet;
  if (!platformWallet) throw new DomainError('platform_recipient_not_configured', 'the platform payout wallet is not configured (PLATFORM_WALLET)');
  const pricing = await currentPricing(deps, deps.settings.brandKey);
  return splitRecipients({ merchant: wallet, platformWallet, ...pricing });
};

/** Makes `deployed` the merchant's split (the one before goes to its history). */
const recordSplit = async (deps: SplitDeps, wallet: string, recipients: SplitRecipient[], deployed: DeployedSplit, now: number, countsAsDeployment: boolean) => {
  const split: MerchantSplit = {
    address: deployed.address,
    recipients,
    platformFeeBps: recipients.find((r) => r.role === 'platform')?.bps ?? 0,
    partnerFeeBps: recipients.find((r) => r.role === 'partner')?.bps ?? 0,
    txHash: deployed.txHash,
    chainId: chainOf(deps).chainId,
    deployedAt: now,
  };
  await updateMerchant(deps, wallet, (current) => ({
    merchant: {
      ...current,
      split,
      splitHistory: current.split ? [current.split, ...current.splitHistory] : current.splitHistory,
      splitDeployments: countsAsDeployment ? [...current.splitDeployments.filter((at) => at > now - DAY_MS), now] : current.splitDeployments,
    },
    result: undefined,
  }));
  return split;
};

/**
 * Deploys the merchant's split with today's fees, through the factory (the relayer pays gas).
 * The same recipients again answer the current split; at most 3 new deployments a day.
 */
export const deploySplit = async (deps: SplitDeps, wallet: string) => {
  const chain = chainOf(deps);
  const recipients = await expectedRecipients(deps, wallet);
  const merchant = await loadMerchant(deps, wallet);
  if (merchant.split && sameRecipients(merchant.split.recipients, recipients)) return { ok: true as const, split: toSplitView(merchant.split) };

  const now = deps.clock.now();
  const recent = merchant.splitDeployments.filter((at) => at > now - DAY_MS);
  if (recent.length >= SPLIT_DEPLOYMENTS_PER_DAY) {
    throw new DomainError('rate_limited', `at most ${SPLIT_DEPLOYMENTS_PER_DAY} split deployments a day`, { resetAt: Math.min(...recent) + DAY_MS });
  }
  // The relayer pays gas: fresh wallets must not be able to drain it, whatever the per-wallet limit.
  const dayStart = now - (now % DAY_MS);
  const budgetId = `split-deploy-budget:${new Date(dayStart).toISOString().slice(0, 10)}`;
  if (!(await takeFromBudget(deps, budgetId, deps.settings.splitDeployDailyBudget, dayStart + 2 * DAY_MS))) {
    throw new DomainError('rate_limited', 'the platform has deployed as many splits as it pays for today; try again after midnight UTC', { resetAt: dayStart + DAY_MS });
  }
  let deployed: DeployedSplit;
  try {
    deployed = await chain.deploySplit(recipients.map(({ address, bps }) => ({ address, bps })));
  } catch (error) {
    await returnToBudget(deps, budgetId).catch(() => {});
    throw error;
  }
  if (!deployed.created) await returnToBudget(deps, budgetId).catch(() => {});
  const split = await recordSplit(deps, wallet, recipients, deployed, now, deployed.created);
  return { ok: true as const, split: toSplitView(split) };
};

/**
 * Records the split the merchant deployed from its own wallet (the factory is permissionless, so
 * the relayer sends nothing and no budget is spent): the factory's split for exactly today's payees
 * must exist on chain, and hold those payees, before it becomes the merchant's split. Asking again
 * answers the current split.
 */
export const registerSplit = async (deps: SplitDeps, wallet: string) => {
  const chain = chainOf(deps);
  const recipients = await expectedRecipients(deps, wallet);
  const merchant = await loadMerchant(deps, wallet);
  if (merchant.split && sameRecipients(merchant.split.recipients, recipients)) return { ok: true as const, split: toSplitView(merchant.split) };
  const payees = recipients.map(({ address, bps }) => ({ address, bps }));
  const found = await chain.findSplit(payees);
  if (!found) {
    throw new DomainError(
      'not_found',
      `no split for your payees is on chain yet: send the factory's createSplit (${chain.splitFactory}) from your wallet with ${payees.map((payee) => `${payee.address} ${payee.bps}`).join(', ')}, and register it once it is mined`,
    );
  }
  // The factory's address is a function of the payees; the split's own record of them is checked too.
  const onChain = await chain.readSplit(found.address);
  if (!onChain || onChain.length !== payees.length || onChain.some((payee, index) => payee.address !== payees[index]!.address || payee.bps !== payees[index]!.bps)) {
    throw new DomainError('conflict', `the contract at ${found.address} is not a split paying your payees`);
  }
  const split = await recordSplit(deps, wallet, recipients, found, deps.clock.now(), false);
  return { ok: true as const, split: toSplitView(split) };
};

export const getSplit = async (deps: Pick<AppDeps, 'merchants' | 'clock'>, wallet: string) => {
  const { split } = await loadMerchant(deps, wallet);
  return { ok: true as const, split: split ? toSplitView(split) : null };
};
