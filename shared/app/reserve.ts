/**
 * The merchant's reserve, read from the chain: per accepted token, its part of what the split holds
 * undistributed (with what waits at the deposit addresses of its paid receipts, on its way there) and
 * its wallet's balance, valued in USD; and the token the next payment should ask for
 * (`recommendToken`), which the buyer's portal pre-selects.
 */
import type { Merchant } from '../domain/merchant';
import { isStale, rateOf, type PayToken, type PayTokenSymbol } from '../domain/payment';
import { recommendToken, roundCents, splitShares, usdValue, type Recommendation } from '../domain/reserve';
import { formatUnits } from '../domain/units';
import { DependencyUnavailableError } from '../ports/errors';
import type { Chain } from '../ports/chain';
import { BoundedCache } from './bounded-cache';
import type { AppDeps } from './deps';
import { loadMerchant } from './merchants';
import { paidDepositAddresses } from './payments/sweeps';

type ReserveDeps = Pick<AppDeps, 'merchants' | 'receipts' | 'clock' | 'chain' | 'settings'>;

const chainOf = (deps: Pick<AppDeps, 'chain'>): Chain => {
  if (!deps.chain) throw new DependencyUnavailableError('chain', 'no chain is configured (CHAIN_RPC_URL)');
  return deps.chain;
};

export interface EthPrice {
  usd: number | null;
  updatedAt: number | null;
  stale: boolean;
}

/**
 * The ETH/USD price where ETH is accepted (null otherwise). A feed older than its heartbeat, or one
 * that cannot be read, is reported stale with no price: ETH is then not valued, which is no error.
 */
export const ethPriceFor = async (deps: Pick<AppDeps, 'chain' | 'settings' | 'clock'>, chain: Chain): Promise<EthPrice | null> => {
  const eth = deps.settings.tokens.find((token) => token.symbol === 'ETH');
  if (!eth) return null;
  try {
    const price = await chain.ethUsdPrice();
    const stale = isStale(price, deps.clock.now(), deps.settings.payments.feedHeartbeatMs);
    return { usd: stale ? null : rateOf(eth, price), updatedAt: price.updatedAt, stale };
  } catch (error) {
    // The node itself being down is an outage, not a stale price.
    if (error instanceof DependencyUnavailableError) throw error;
    return { usd: null, updatedAt: null, stale: true };
  }
};

const lower = (address: string) => address.toLowerCase();
const amounts = (amount: bigint, decimals: number) => ({ amount: amount.toString(), display: formatUnits(amount, decimals) });

interface TokenHolding {
  token: PayToken;
  splitBalance: bigint | null;
  inSplit: bigint | null;
  inWallet: bigint;
  total: bigint;
  usdPrice: number | null;
  /** Unrounded: shares come from it. */
  usd: number | null;
}

/** Reads what the merchant holds of each accepted token, at one block. */
const readHoldings = async (deps: ReserveDeps, merchant: Merchant) => {
  const chain = chainOf(deps);
  const tokens = deps.settings.tokens;
  const addresses = tokens.map((token) => lower(token.address));
  const split = merchant.split;
  const payee = split?.recipients.find((recipient) => recipient.role === 'merchant')?.address ?? merchant.wallet;
  const [blockNumber, deposits] = await Promise.all([chain.blockNumber(), split ? paidDepositAddresses(deps, merchant.wallet, split.address) : Promise.resolve([])]);
  const [balances, inSplit, ethPrice] = await Promise.all([
    chain.balancesOf(split ? [merchant.wallet, split.address, ...deposits] : [merchant.wallet], addresses, blockNumber),
    split ? chain.splitHoldings(split.address, payee, addresses, blockNumber) : Promise.resolve(undefined),
    ethPriceFor(deps, chain),
  ]);
  const holdings: TokenHolding[] = tokens.map((token, index) => {
    const address = addresses[index]!;
    const inWallet = balances[lower(merchant.wallet)]?.[address] ?? 0n;
    const held = inSplit?.[address];
    const mine = split && held ? splitShares(held.distributable, split.recipients).merchant + held.credited : null;
    // What waits at deposit addresses joins the split's balance when swept: the merchant's part of the two together.
    const waiting = deposits.reduce((sum, deposit) => sum + (balances[deposit]?.[address] ?? 0n), 0n);
    const mineWithDeposits = split && held ? splitShares(held.distributable + waiting, split.recipients).merchant + held.credited : null;
    const total = inWallet + (mineWithDeposits ?? 0n);
    const usdPrice = token.symbol === 'ETH' ? (ethPrice?.usd ?? null) : 1;
    return {
      token,
      splitBalance: split ? (balances[lower(split.address)]?.[address] ?? 0n) : null,
      inSplit: mine,
      inWallet,
      total,
      usdPrice,
      usd: usdValue(total, token.decimals, usdPrice),
    };
  });
  return { blockNumber, holdings, ethPrice };
};

const recommendationOf = (holdings: TokenHolding[], merchant: Merchant): Recommendation =>
  recommendToken(
    holdings.map((holding) => ({ symbol: holding.token.symbol, usd: holding.usd })),
    merchant.shop.reserveRatios ?? null,
  );

const staleNote = (ethPrice: EthPrice | null) => (ethPrice?.stale ? 'the ETH/USD feed is stale: ETH is not valued and has no share' : null);

/**
 * `GET /api/reserve/balances`: per accepted token, the merchant's part of the split's undistributed
 * balance (its share of what `distribute` would pay now, plus any credit the split owes it) and its
 * wallet's balance; `total` also counts its part of what waits at its paid receipts' deposit addresses
 * for their sweep into the split (no field of its own), valued in USD (the stablecoins at one dollar, ETH at the feed), each token's share
 * of the valued whole, the totals, and the target ratios. Without a split only the wallet counts.
 */
export const getReserveBalances = async (deps: ReserveDeps, wallet: string) => {
  const merchant = await loadMerchant(deps, wallet);
  const { blockNumber, holdings, ethPrice } = await readHoldings(deps, merchant);
  const valuedTotal = holdings.reduce((total, holding) => total + (holding.usd ?? 0), 0);
  const ratios = merchant.shop.reserveRatios ?? null;
  const notes = [merchant.split ? null : 'no split is deployed: only the wallet is counted', staleNote(ethPrice)].filter(Boolean);
  return {
    ok: true as const,
    wallet: merchant.wallet,
    split: merchant.split?.address ?? null,
    note: notes.length > 0 ? notes.join('; ') : null,
    blockNumber,
    tokens: holdings.map((holding) => ({
      symbol: holding.token.symbol,
      address: lower(holding.token.address),
      decimals: holding.token.decimals,
      split:
        holding.inSplit === null
          ? null
          : { balance: (holding.splitBalance ?? 0n).toString(), merchant: amounts(holding.inSplit, holding.token.decimals) },
      wallet: amounts(holding.inWallet, holding.token.decimals),
      total: amounts(holding.total, holding.token.decimals),
      usdPrice: holding.usdPrice,
      usdValue: holding.usd === null ? null : roundCents(holding.usd),
      share: holding.usd === null ? null : valuedTotal > 0 ? holding.usd / valuedTotal : 0,
      targetShare: ratios ? (ratios[holding.token.symbol] ?? 0) : null,
    })),
    totalUsd: roundCents(valuedTotal),
    ethPrice,
    targetRatios: ratios,
  };
};

/** `GET /api/reserve/recommend`: the token the next payment should ask for, why, and the numbers used. */
export const getReserveRecommendation = async (deps: ReserveDeps, wallet: string) => {
  const merchant = await loadMerchant(deps, wallet);
  const { blockNumber, holdings, ethPrice } = await readHoldings(deps, merchant);
  return { ok: true as const, ...recommendationOf(holdings, merchant), ethPrice, blockNumber };
};

/** A recommendation shown to buyers is read again at most this often per merchant. */
export const PORTAL_RECOMMENDATION_TTL_MS = 60_000;
/** The buyer's page does not wait longer than this for the chain. */
const PORTAL_RECOMMENDATION_WAIT_MS = 1_500;

const recommended = new WeakMap<object, BoundedCache<PayTokenSymbol | null>>();
const RECOMMENDATION_CACHE_LIMITS = { maxEntries: 10_000, maxBytes: 2 * 1024 * 1024, sizeOf: () => 16 };

/**
 * The token the buyer's page pre-selects for this merchant: the reserve recommendation, for a shop that
 * set `reserveRatios` (without them the page keeps its usual first choice, a stablecoin). Best effort:
 * null when the chain is slow or down, and cached per merchant for a minute, since the page is read
 * every second while a buyer waits.
 */
export const portalRecommendation = async (deps: ReserveDeps, merchant: Merchant): Promise<PayTokenSymbol | null> => {
  if (!merchant.shop.reserveRatios || !merchant.split || !deps.chain) return null;
  let cache = recommended.get(deps.chain);
  if (!cache) recommended.set(deps.chain, (cache = new BoundedCache(RECOMMENDATION_CACHE_LIMITS)));
  const now = deps.clock.now();
  const key = `${merchant.wallet}:${merchant.split.address}:${JSON.stringify(merchant.shop.reserveRatios)}`;
  const hit = cache.get(key);
  if (hit && now - hit.at < PORTAL_RECOMMENDATION_TTL_MS) return hit.value;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), PORTAL_RECOMMENDATION_WAIT_MS)));
  // A read that outlasts the wait still fills the cache for the page's next call.
  const read = readHoldings(deps, merchant).then(({ holdings }) => {
    const token = recommendationOf(holdings, merchant).token;
    cache.set(key, token, now);
    return token;
  });
  read.catch(() => {});
  try {
    return await Promise.race([read, timeout]);
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
  }
};
