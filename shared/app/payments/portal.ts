/**
 * The buyer's side of a receipt: what the portal shows, the quotes it asks for, and the tracking
 * statuses it reports. Routes of the `portal` kind: anyone who has the receipt's (unguessable) id.
 */
import { DomainError } from '../../domain/errors';
import { buyerAdvice, failureInfo, isFailureCode } from '../../domain/failures';
import type { Merchant } from '../../domain/merchant';
import { toCents } from '../../domain/money';
import {
  formatUnits,
  isStale,
  paymentUri,
  quoteAmount,
  rateOf,
  ZERO_ADDRESS,
  type FeedPrice,
  type PayToken,
  type PayTokenSymbol,
  type Quote,
} from '../../domain/payment';
import type { PortalView, QuoteView, notPayableReasons } from '../../domain/portal-views';
import { hasExpired, receiptClaimId, type Receipt } from '../../domain/receipt';
import { transactionUrl } from '../../domain/units';
import { ID_PATTERN } from '../../domain/query-params';
import type { Versioned } from '../../ports/inventory-repository';
import { DependencyUnavailableError } from '../../ports/errors';
import type { PortalEvent } from '../../domain/portal-views';
import type { z } from 'zod';
import type { AppDeps } from '../deps';
import { BoundedCache } from '../bounded-cache';
import { withEtagRetry } from '../etag-retry';
import { loadMerchant } from '../merchants';
import { portalRecommendation } from '../reserve';
import { changeStatus } from '../receipt-status';
import { receiptOwner } from './ledger';
import { DEPOSIT_WATCH_AFTER_MS, depositOf, watchDeposit } from './deposits';

export type PortalDeps = Pick<AppDeps, 'receipts' | 'claims' | 'merchants' | 'chain' | 'settings' | 'clock' | 'ids' | 'chainState' | 'queue' | 'onramp'>;

/** Quotes kept on a receipt (newest last): enough for every token and for late payments of earlier quotes. */
const MAX_QUOTES = 20;
/** A quote this close to its end is not handed out again: the buyer gets a fresh one. */
const QUOTE_REUSE_MARGIN_MS = 60_000;

const notFound = (receiptId: string) => new DomainError('not_found', `receipt ${receiptId} not found`);

/**
 * Receipt id → owner wallet, per store: a receipt's claim never changes owner, so what was read once
 * holds (only ids that exist are kept; the bounds decide how many).
 */
const owners = new WeakMap<object, BoundedCache<string>>();
const OWNER_CACHE_LIMITS = { maxEntries: 50_000, maxBytes: 8 * 1024 * 1024, sizeOf: (owner: string) => 2 * owner.length + 160 };

/** A receipt by its id alone (the portal's URL names no merchant): the id's claim names the owner. */
export const findReceipt = async (deps: Pick<AppDeps, 'claims' | 'receipts'>, receiptId: string): Promise<Versioned<Receipt>> => {
  if (!ID_PATTERN.test(receiptId)) throw notFound(receiptId);
  let cache = owners.get(deps.claims);
  if (!cache) owners.set(deps.claims, (cache = new BoundedCache(OWNER_CACHE_LIMITS)));
  let owner = cache.get(receiptId)?.value;
  if (!owner) {
    const claimId = receiptClaimId(receiptId);
    owner = (await deps.claims.get(claimId, claimId))?.value.owner;
  }
  const stored = owner && (await deps.receipts.get(owner, receiptId));
  if (!stored) throw notFound(receiptId);
  cache.set(receiptId, owner!, 0);
  return stored;
};

type NotPayable = (typeof notPayableReasons)[number];

/** Why this receipt cannot be quoted now, or null. An expired receipt still counts a payment of an earlier quote. */
export const notPayableReason = (deps: Pick<AppDeps, 'chain' | 'settings' | 'clock'>, receipt: Receipt, merchant: Merchant): NotPayable | null => {
  if (receipt.status === 'paid' || receipt.status === 'reconciled') return 'paid';
  if (receipt.status === 'refund_requested' || receipt.status === 'refunded') return 'refunded';
  if (hasExpired(receipt, deps.settings.payments.receiptExpiryMs, deps.clock.now())) return 'expired';
  if (!deps.chain || deps.settings.tokens.length === 0) return 'no_chain';
  if (!merchant.split) return 'split_required';
  return null;
};

export const toQuoteView = (quote: Quote): QuoteView => ({
  quoteId: quote.quoteId,
  token: quote.token,
  tokenAddress: quote.tokenAddress,
  chainId: quote.chainId,
  payTo: quote.payTo,
  amount: quote.amount,
  decimals: quote.decimals,
  display: formatUnits(quote.amount, quote.decimals),
  usd: quote.usd,
  rate: quote.rate,
  expiresAt: quote.expiresAt,
  uri: quote.uri,
});

const openQuote = (receipt: Receipt, now: number, token?: PayTokenSymbol): Quote | undefined =>
  [...(receipt.quotes ?? [])].reverse().find((quote) => quote.expiresAt > now && (!token || quote.token === token));

export const explorerLink = (deps: Pick<AppDeps, 'settings'>, hash: string): string | null => transactionUrl(deps.settings.payments.explorerUrl, hash);

/** The buyer's view: an allow-list of the receipt (no metadata, webhook target, keys or merchant internals). */
export const getPortalView = async (deps: PortalDeps, receiptId: string): Promise<PortalView> => {
  const { value: receipt } = await findReceipt(deps, receiptId);
  const merchant = await loadMerchant(deps, receipt.wallet);
  const now = deps.clock.now();
  const reason = notPayableReason(deps, receipt, merchant);
  const quote = reason ? undefined : openQuote(receipt, now);
  // Paid on chain (a card delivery too); a balance credit names no transaction.
  const paid = receipt.paidAt && receipt.token ? receipt.transactionHash : undefined;
  const lastRecord = receipt.payments?.at(-1);
  const underpaid = receipt.status !== 'paid' && lastRecord?.outcome === 'underpaid' && lastRecord.token ? lastRecord : undefined;
  const failure = receipt.status === 'failed' && receipt.failure && isFailureCode(receipt.failure.failureCode) ? failureInfo(receipt.failure.failureCode) : null;
  const branding = merchant.shop.branding;
  return {
    receiptId: receipt.receiptId,
    status: receipt.status,
    shop: { name: branding.name || receipt.brandName, logoUrl: branding.brandLogoUrl, colors: branding.colors },
    currency: receipt.currency,
    lineItems: receipt.lineItems,
    totalUsd: receipt.totalUsd,
    customerTotalUsd: receipt.customerTotalUsd,
    taxRate: receipt.taxRate,
    jurisdictionCode: receipt.jurisdictionCode,
    createdAt: receipt.createdAt,
    expiresAt: receipt.createdAt + deps.settings.payments.receiptExpiryMs,
    payable: reason === null,
    notPayableReason: reason,
    chainId: deps.chain ? deps.chain.chainId : null,
    tokens: deps.settings.tokens.map((token) => ({ symbol: token.symbol, decimals: token.decimals })),
    recommendedToken: reason ? null : await portalRecommendation(deps, merchant),
    quote: quote ? toQuoteView(quote) : null,
    payment:
      paid !== undefined
      ? {
          transactionHash: paid,
          buyerWallet: receipt.buyerWallet,
          token: receipt.token,
          amount: receipt.amountPaid ?? null,
          paidAt: receipt.paidAt ?? null,
          explorerUrl: paid ? explorerLink(deps, paid) : null,
        }
      : null,
    underpaid: underpaid ? { token: underpaid.token!, received: underpaid.amount, expected: underpaid.expected ?? underpaid.amount } : null,
    // The action addressed to the buyer (the registry's is the merchant's).
    failure: failure && receipt.failure ? { code: receipt.failure.failureCode, reason: failure.reason, action: buyerAdvice[failure.category] } : null,
    card: deps.onramp && deps.settings.tokens.some((token) => token.symbol === 'USDC') ? { provider: deps.onramp.name } : null,
  };
};

/** The refusal (and its code) for a receipt that cannot be paid now. */
export const refuse = (reason: NotPayable, receipt: Receipt): never => {
  if (reason === 'split_required') throw new DomainError('split_required', 'this shop has no split contract yet, so it cannot take payments');
  if (reason === 'no_chain') throw new DependencyUnavailableError('chain', 'payments are not configured on this deployment');
  const why = { paid: 'is already paid', refunded: 'has been refunded', expired: 'has expired', not_payable: 'cannot be paid' }[reason];
  throw new DomainError('receipt_not_payable', `receipt ${receipt.receiptId} ${why}`, { status: receipt.status });
};

/** The ETH/USD price, refused when the feed has not answered within its heartbeat. */
const freshPrice = async (deps: PortalDeps): Promise<FeedPrice> => {
  const price = await deps.chain!.ethUsdPrice();
  if (isStale(price, deps.clock.now(), deps.settings.payments.feedHeartbeatMs)) {
    throw new DomainError('price_stale', 'the ETH price feed is stale or at its bounds; pay with USDC or USDT, or try again later', { token: 'ETH' });
  }
  return price;
};

/**
 * What the buyer pays in a token: the open quote for it, or a new one (10-minute lock; exactly the
 * amount due, to the receipt's own deposit address; an EIP-681 URI for wallets and the QR code). The
 * address goes on the watcher's list before it is handed out.
 */
export const quoteFor = async (deps: PortalDeps, receiptId: string, symbol: PayTokenSymbol): Promise<QuoteView> => {
  const { value: receipt } = await findReceipt(deps, receiptId);
  const merchant = await loadMerchant(deps, receipt.wallet);
  const reason = notPayableReason(deps, receipt, merchant);
  if (reason) refuse(reason, receipt);
  const token = deps.settings.tokens.find((candidate) => candidate.symbol === symbol);
  if (!token) throw new DomainError('unsupported_token', `${symbol} is not accepted here; pay with ${deps.settings.tokens.map((t) => t.symbol).join(', ')}`, { field: 'token' });
  const now = deps.clock.now();
  const existing = openQuote(receipt, now + QUOTE_REUSE_MARGIN_MS, symbol);
  if (existing) return toQuoteView(existing);

  const chain = deps.chain!;
  const deposit = await depositOf(deps, receipt, merchant);
  const price = token.symbol === 'ETH' ? await freshPrice(deps) : undefined;
  const { quoteLockMs, receiptExpiryMs } = deps.settings.payments;
  const expiresAt = now + quoteLockMs;
  const amount = quoteAmount(token, toCents(receipt.customerTotalUsd), price).toString();
  const tokenAddress = token.symbol === 'ETH' ? null : token.address;
  const quote: Quote = {
    quoteId: `q_${deps.ids.random(10)}`,
    token: token.symbol,
    tokenAddress,
    chainId: chain.chainId,
    payTo: deposit.address,
    amount,
    decimals: token.decimals,
    usd: receipt.customerTotalUsd,
    rate: rateOf(token, price),
    createdAt: now,
    expiresAt,
    uri: paymentUri({ chainId: chain.chainId, payTo: deposit.address, tokenAddress, amount }),
  };
  // Watched while a payment of it may still come, and a while after: late and extra transfers are recorded.
  const until = Math.max(expiresAt, receipt.createdAt + receiptExpiryMs) + DEPOSIT_WATCH_AFTER_MS;
  await watchDeposit(deps, deposit.address, { owner: receiptOwner(receipt), split: deposit.split, until, ...(token.symbol === 'ETH' && { eth: true }) });
  await withEtagRetry<void>(
    async ({ write }) => {
      const latest = await findReceipt(deps, receiptId);
      const quotes = [...(latest.value.quotes ?? []), quote].slice(-MAX_QUOTES);
      await write(() => deps.receipts.replace(latest.value.wallet, { ...latest.value, quotes, deposit: latest.value.deposit ?? deposit }, latest.etag));
    },
    {
      exhausted: () => {
        throw new DomainError('conflict', 'the receipt kept changing; try again');
      },
    },
  );
  return toQuoteView(quote);
};

/**
 * The open quote in a token, or null: what a GET may show (the QR code). Only `quoteFor`, behind a
 * POST, makes quotes: a crawler or a link preview fetching a URL never claims an amount. A receipt
 * that can no longer be paid shows none, open or not, so nothing invites a second payment.
 */
export const openQuoteFor = async (deps: PortalDeps, receiptId: string, symbol: PayTokenSymbol): Promise<QuoteView | null> => {
  const { value: receipt } = await findReceipt(deps, receiptId);
  if (notPayableReason(deps, receipt, await loadMerchant(deps, receipt.wallet))) return null;
  const quote = openQuote(receipt, deps.clock.now(), symbol);
  return quote ? toQuoteView(quote) : null;
};

/** The token address of a quote (the zero address for ETH), as transfers name it. */
export const quoteTokenAddress = (quote: Pick<Quote, 'tokenAddress'>) => (quote.tokenAddress ?? ZERO_ADDRESS).toLowerCase();

/**
 * What the page reports: a tracking status (through the one status service; never paid or failed)
 * and, for the merchant's information, its last attempt's error, which changes no status and sends no webhook.
 */
export const recordPortalEvent = async (deps: PortalDeps, receiptId: string, event: z.output<typeof PortalEvent>) => {
  const stored = await findReceipt(deps, receiptId);
  const wallet = stored.value.wallet;
  if (event.error) {
    const error = { code: event.error.code, message: event.error.message ?? null, at: deps.clock.now() };
    await withEtagRetry<void>(
      async ({ write }) => {
        const latest = await findReceipt(deps, receiptId);
        await write(() => deps.receipts.replace(wallet, { ...latest.value, lastBuyerError: error }, latest.etag));
      },
      { exhausted: () => undefined },
    );
  }
  if (!event.status) return { ok: true as const, status: stored.value.status };
  // An expired receipt stays expired for the page: a tracking status must not make it payable again.
  if (hasExpired(stored.value, deps.settings.payments.receiptExpiryMs, deps.clock.now())) {
    return { ok: true as const, status: stored.value.status, ignored: true as const, reason: 'the receipt has expired' };
  }
  const outcome = await changeStatus(deps, {
    wallet,
    receiptId,
    status: event.status,
    actor: 'portal',
    // The connected wallet, until the chain names the payer.
    ...(event.status === 'buyer_logged_in' &&
      event.wallet && { facts: (current: Receipt) => ({ buyerWallet: current.paidAt ? current.buyerWallet : event.wallet!, connectedWallet: event.wallet!.toLowerCase() }) }),
  });
  return outcome.ignored ? { ok: true as const, status: outcome.receipt.status, ignored: true as const, reason: outcome.reason } : { ok: true as const, status: outcome.receipt.status };
};
