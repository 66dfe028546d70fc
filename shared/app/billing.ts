/**
 * `GET /api/billing/balance`: the merchant's standing with the platform, for the key that asks: its
 * plan and quota, the requests made with it this billing period (shared/app/usage.ts), the period and
 * when the plan renews, and the platform fees paid through the merchant's split in the period (from
 * the split's logs and its payees' shares).
 */
import type { BillingBalanceView, BillingPeriod } from '../domain/billing';
import { currentPlanOf, type Merchant } from '../domain/merchant';
import { splitShares, roundCents, usdValue } from '../domain/reserve';
import type { Subscription } from '../domain/subscription';
import { formatUnits } from '../domain/units';
import type { Chain, SplitTransfer } from '../ports/chain';
import { BoundedCache } from './bounded-cache';
import type { AppDeps } from './deps';
import { loadMerchant } from './merchants';
import { ethPriceFor } from './reserve';
import { usageInPeriod } from './usage';

type BillingDeps = Pick<AppDeps, 'merchants' | 'claims' | 'clock' | 'chain' | 'settings'>;

/** Blocks per log read (as `GET /api/split/transactions` reads them); windows are aligned to it, so finished ones can be kept. */
export const FEE_WINDOW_BLOCKS = 10_000;
/** Windows read for one answer at most (the latest ones): a longer period is answered from its end, `complete: false`. */
export const MAX_FEE_WINDOWS = 150;
/** Window reads at once. */
const FEE_READS_AT_ONCE = 4;
/** A split's record is written after its deployment is mined; logs are read from a little before, against clock skew. */
const DEPLOYMENT_SKEW_MS = 10 * 60_000;

const USAGE_COUNTED = `per key and period in the store, batched: this instance's requests at once, other instances' within seconds`;

interface ChainCaches {
  /** Block number of the first block at or after a time. */
  blocks: BoundedCache<number>;
  /** A split's logs in a finished window (below the confirmation depth): they no longer change. */
  windows: BoundedCache<SplitTransfer[]>;
}
const caches = new WeakMap<object, ChainCaches>();
const cachesOf = (chain: Chain): ChainCaches => {
  let found = caches.get(chain);
  if (!found) {
    found = {
      blocks: new BoundedCache({ maxEntries: 10_000, maxBytes: 1024 * 1024, sizeOf: () => 16 }),
      windows: new BoundedCache({ maxEntries: 50_000, maxBytes: 32 * 1024 * 1024, sizeOf: (logs) => 64 + 400 * logs.length }),
    };
    caches.set(chain, found);
  }
  return found;
};

const firstBlockAt = async (chain: Chain, at: number): Promise<number> => {
  const { blocks } = cachesOf(chain);
  const key = String(at);
  const hit = blocks.get(key);
  if (hit) return hit.value;
  const block = await chain.firstBlockAtOrAfter(at);
  // Only a block already mined is settled; a time still ahead of the head is asked again.
  if (block < (await chain.blockNumber())) blocks.set(key, block, 0);
  return block;
};

/** The split's logs from `fromBlock` to `toBlock`, read a window at a time (finished windows from memory). */
const transfersIn = async (deps: BillingDeps, chain: Chain, split: string, fromBlock: number, toBlock: number): Promise<SplitTransfer[]> => {
  const { windows } = cachesOf(chain);
  const settled = toBlock - deps.settings.payments.confirmations;
  const starts: number[] = [];
  for (let start = fromBlock - (fromBlock % FEE_WINDOW_BLOCKS); start <= toBlock; start += FEE_WINDOW_BLOCKS) starts.push(start);
  const all: SplitTransfer[] = [];
  for (let index = 0; index < starts.length; index += FEE_READS_AT_ONCE) {
    const batch = starts.slice(index, index + FEE_READS_AT_ONCE);
    const read = await Promise.all(
      batch.map(async (start) => {
        const end = start + FEE_WINDOW_BLOCKS - 1;
        const key = `${split}:${start}`;
        const hit = windows.get(key);
        if (hit) return hit.value;
        const logs = await chain.splitTransfers(split, { fromBlock: start, toBlock: Math.min(end, toBlock) });
        if (end <= settled) windows.set(key, logs, 0);
        return logs;
      }),
    );
    all.push(...read.flat());
  }
  return all.filter((transfer) => transfer.blockNumber >= fromBlock && transfer.blockNumber <= toBlock);
};

const noFees = (note: string, split: Merchant['split']): BillingBalanceView['platformFees'] => ({
  split: split?.address ?? null,
  platformWallet: split?.recipients.find((recipient) => recipient.role === 'platform')?.address ?? null,
  platformFeeBps: split?.platformFeeBps ?? 0,
  fromBlock: null,
  toBlock: null,
  complete: split === null,
  tokens: [],
  paidUsd: 0,
  accruedUsd: 0,
  note,
});

/**
 * The platform's fees through the merchant's current split in the period, per accepted token:
 * `paid`, what the split distributed to the platform's payee; `accrued`, the platform's share of the
 * payments into the split (what it is owed, distributed or not). Valued as reserve balances are
 * (the stablecoins at one dollar, ETH at today's feed price; null when the feed is stale).
 */
const platformFees = async (deps: BillingDeps, merchant: Merchant, period: BillingPeriod): Promise<BillingBalanceView['platformFees']> => {
  const split = merchant.split;
  if (!split) return noFees('no split is deployed: no platform fees', null);
  const chain = deps.chain;
  if (!chain) return noFees('no chain is configured here: the fees cannot be read', split);
  const platform = split.recipients.find((recipient) => recipient.role === 'platform')?.address ?? null;
  const head = await chain.blockNumber();
  const periodStart = await firstBlockAt(chain, Math.max(period.start, split.deployedAt - DEPLOYMENT_SKEW_MS));
  const earliest = Math.max(0, head - head % FEE_WINDOW_BLOCKS - (MAX_FEE_WINDOWS - 1) * FEE_WINDOW_BLOCKS);
  const fromBlock = Math.max(periodStart, earliest);
  const complete = fromBlock === periodStart;
  const tokens = deps.settings.tokens;
  const [transfers, ethPrice] = await Promise.all([fromBlock <= head ? transfersIn(deps, chain, split.address, fromBlock, head) : Promise.resolve([]), ethPriceFor(deps, chain)]);
  const paid = new Map<string, bigint>();
  const accrued = new Map<string, bigint>();
  for (const transfer of transfers) {
    if (transfer.kind === 'distribution' && platform && transfer.to === platform) paid.set(transfer.token, (paid.get(transfer.token) ?? 0n) + BigInt(transfer.amount));
    if (transfer.kind === 'payment') accrued.set(transfer.token, (accrued.get(transfer.token) ?? 0n) + splitShares(BigInt(transfer.amount), split.recipients).platform);
  }
  let paidUsd = 0;
  let accruedUsd = 0;
  const rows = tokens.map((token) => {
    const address = token.address.toLowerCase();
    const price = token.symbol === 'ETH' ? (ethPrice?.usd ?? null) : 1;
    const paidAmount = paid.get(address) ?? 0n;
    const accruedAmount = accrued.get(address) ?? 0n;
    const paidValue = usdValue(paidAmount, token.decimals, price);
    const accruedValue = usdValue(accruedAmount, token.decimals, price);
    paidUsd += paidValue ?? 0;
    accruedUsd += accruedValue ?? 0;
    return {
      symbol: token.symbol,
      address,
      decimals: token.decimals,
      paid: paidAmount.toString(),
      paidDisplay: formatUnits(paidAmount, token.decimals),
      paidUsd: paidValue === null ? null : roundCents(paidValue),
      accrued: accruedAmount.toString(),
      accruedDisplay: formatUnits(accruedAmount, token.decimals),
      accruedUsd: accruedValue === null ? null : roundCents(accruedValue),
    };
  });
  const notes = [
    complete ? null : `the period spans more than ${MAX_FEE_WINDOWS * FEE_WINDOW_BLOCKS} blocks: fees are counted from block ${fromBlock}`,
    ethPrice?.stale ? 'the ETH/USD feed is stale: ETH fees are not valued' : null,
    merchant.splitHistory.length > 0 ? 'fees through earlier splits of this merchant are not counted' : null,
  ].filter(Boolean);
  return {
    split: split.address,
    platformWallet: platform,
    platformFeeBps: split.platformFeeBps,
    fromBlock,
    toBlock: head,
    complete,
    tokens: rows,
    paidUsd: roundCents(paidUsd),
    accruedUsd: roundCents(accruedUsd),
    note: notes.length > 0 ? notes.join('; ') : null,
  };
};

export const getBillingBalance = async (deps: BillingDeps, subscription: Subscription): Promise<BillingBalanceView> => {
  const now = deps.clock.now();
  const [usage, merchant] = await Promise.all([usageInPeriod(deps, subscription, now), loadMerchant(deps, subscription.wallet)]);
  const walletPlan = currentPlanOf(merchant, now);
  const term = merchant.plan && walletPlan === merchant.plan.name ? merchant.plan : undefined;
  const endsAt = term?.expiresAt ?? null;
  return {
    ok: true,
    wallet: subscription.wallet,
    subscriptionId: subscription.id,
    plan: { name: subscription.plan, walletPlan, source: term ? term.source : 'starter', endsAt },
    quota: { requestsPerMinute: deps.settings.planQuotas[subscription.plan] },
    usage: { requests: usage.requests, counted: USAGE_COUNTED },
    period: usage.period,
    renewsAt: endsAt ?? usage.period.end,
    platformFees: await platformFees(deps, merchant, usage.period),
  };
};
