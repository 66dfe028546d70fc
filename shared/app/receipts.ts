import { DomainError } from '../domain/errors';
import { toCents } from '../domain/money';
import { PROCESSING_FEE_LABEL, totalWithFeesCents } from '../domain/pricing';
import { newReceipt, paymentUrlFor, receiptClaimId, receiptStatuses, type Receipt, type ReceiptStatus } from '../domain/receipt';
import { toReceiptDetailView, toReceiptView, toStatusView } from '../domain/receipt-views';
import { ID_PATTERN } from '../domain/query-params';
import type { ReceiptCreateRequest } from '../domain/receipt-request';
import { webhookTargetProblem } from '../domain/webhook-target';
import { DuplicateKeyError, StoreUnavailableError } from '../ports/errors';
import { BoundedCache } from './bounded-cache';
import type { AppDeps } from './deps';
import { requestHash } from './hashing';
import { loadMerchant } from './merchants';
import { currentPricing } from './pricing';
import { changeStatus } from './receipt-status';
import { takeClaim } from './claims';

type ReceiptDeps = Pick<AppDeps, 'receipts' | 'claims' | 'merchants' | 'platform' | 'queue' | 'clock' | 'settings'>;

const conflict = (id: string, why: string) => new DomainError('conflict', `receipt ${id} ${why}`, { field: 'id' });

/**
 * A merchant's own receipt, sent whole. Ids are global (the portal URL has none of the merchant):
 * a claim makes each one unique; the same request again answers the original 201.
 */
export const createReceipt = async (deps: ReceiptDeps, caller: { wallet: string; subscriptionId: string | null }, request: ReceiptCreateRequest) => {
  if (request.webhook_url) {
    const problem = webhookTargetProblem(request.webhook_url, deps.settings.development);
    if (problem) throw new DomainError('invalid_input', `webhook_url: ${problem}`, { field: 'webhook_url' });
  }
  const answer = { id: request.id, paymentUrl: paymentUrlFor(deps.settings.baseUrl, request.id), status: 'pending' as const };
  const hash = requestHash(request);
  const claimId = receiptClaimId(request.id);
  const claimed = await takeClaim(deps.claims, { id: claimId, owner: caller.wallet, createdAt: deps.clock.now() });
  if (!claimed.taken) {
    if (claimed.held && claimed.held.value.owner !== caller.wallet) throw conflict(request.id, 'belongs to another merchant');
    const existing = await deps.receipts.get(caller.wallet, request.id);
    if (existing) {
      if (existing.value.requestHash === hash) return answer;
      throw conflict(request.id, 'exists with a different body');
    }
    // Claimed by this merchant but never written (a crash between the two): write it now.
  }

  const merchant = await loadMerchant(deps, caller.wallet);
  const customerTotalUsd = request.lineItems.some((line) => line.label === PROCESSING_FEE_LABEL)
    ? request.totalUsd
    : totalWithFeesCents(
        toCents(request.totalUsd),
        toCents(merchant.shop.processingFeePct),
        merchant.split ? merchant.split.platformFeeBps + merchant.split.partnerFeeBps : await currentFees(deps),
      ) / 100;
  const receipt = newReceipt(
    {
      receiptId: request.id,
      wallet: caller.wallet,
      brandKey: deps.settings.brandKey,
      brandName: deps.settings.brandName,
      status: 'pending',
      lineItems: request.lineItems,
      totalUsd: request.totalUsd,
      customerTotalUsd,
      jurisdictionCode: null,
      taxRate: null,
      source: 'api',
      createdBy: caller.subscriptionId,
    },
    deps.clock.now(),
    {
      webhookUrl: request.webhook_url ?? null,
      redirectUrl: request.redirect_url ?? null,
      transactionId: request.transactionId ?? null,
      metadata: request.metadata ?? null,
      requestHash: hash,
    },
  );
  try {
    await deps.receipts.create(caller.wallet, receipt);
  } catch (error) {
    if (!(error instanceof DuplicateKeyError)) throw error;
    const existing = await deps.receipts.get(caller.wallet, request.id);
    if (existing?.value.requestHash !== hash) throw conflict(request.id, 'exists with a different body');
  }
  return answer;
};

const currentFees = async (deps: ReceiptDeps) => {
  const pricing = await currentPricing(deps, deps.settings.brandKey);
  return pricing.platformFeeBps + (pricing.partnerWallet ? pricing.partnerFeeBps : 0);
};

const loadOwn = async (deps: Pick<AppDeps, 'receipts'>, wallet: string, id: string): Promise<Receipt> => {
  const stored = ID_PATTERN.test(id) ? await deps.receipts.get(wallet, id) : undefined;
  if (!stored) throw new DomainError('not_found', `receipt ${id} not found`);
  return stored.value;
};

export const getReceipt = async (deps: Pick<AppDeps, 'receipts' | 'settings'>, wallet: string, id: string) =>
  toReceiptDetailView(await loadOwn(deps, wallet, id), deps.settings.baseUrl, deps.settings.tokens);

type ReceiptListing = { receipts: ReturnType<typeof toReceiptView>[]; nextCursor: string | null; degraded?: true };
const recentListings = new WeakMap<object, BoundedCache<ReceiptListing>>();
/** Keys are partly the caller's (cursors): the bounds, not the callers, decide what is kept. */
const LISTING_CACHE_LIMITS = { maxEntries: 1_000, maxBytes: 16 * 1024 * 1024, sizeOf: (listing: ReceiptListing) => 2 * JSON.stringify(listing).length };

/** What this instance's listing cache holds now (entries, estimated bytes). */
export const listingCacheUsage = (deps: Pick<AppDeps, 'receipts'>) => {
  const cache = recentListings.get(deps.receipts);
  return { entries: cache?.size ?? 0, bytes: cache?.byteSize ?? 0, maxBytes: LISTING_CACHE_LIMITS.maxBytes };
};

/**
 * A page of the merchant's receipts. This instance remembers the pages it served: while the store
 * is unreachable it answers the last one for the same query, marked `degraded`.
 */
export const listReceipts = async (
  deps: Pick<AppDeps, 'receipts' | 'settings'>,
  wallet: string,
  query: { limit: number; cursor?: string; status?: ReceiptStatus },
): Promise<ReceiptListing> => {
  let cache = recentListings.get(deps.receipts);
  if (!cache) recentListings.set(deps.receipts, (cache = new BoundedCache(LISTING_CACHE_LIMITS)));
  const key = JSON.stringify([wallet, query.limit, query.cursor ?? null, query.status ?? null]);
  try {
    const page = await deps.receipts.listByWallet(wallet, query);
    const listing = { receipts: page.receipts.map((receipt) => toReceiptView(receipt, deps.settings.baseUrl)), nextCursor: page.nextCursor };
    cache.set(key, listing, 0);
    return listing;
  } catch (error) {
    const cached = cache.get(key);
    if (error instanceof StoreUnavailableError && cached) return { ...cached.value, degraded: true };
    throw error;
  }
};

export const getReceiptStatus = async (deps: Pick<AppDeps, 'receipts'>, wallet: string, id: string) => toStatusView(await loadOwn(deps, wallet, id));

/** A merchant backend reports a tracking status or a session failure; the state machine decides. */
export const reportReceiptStatus = async (
  deps: Pick<AppDeps, 'receipts' | 'merchants' | 'queue' | 'clock'>,
  wallet: string,
  input: { id: string; status: string; failureCode?: string },
  /** When the report was accepted, if earlier than now (an outbox entry). */
  acceptedAt?: number,
) => {
  if (!(receiptStatuses as readonly string[]).includes(input.status)) {
    throw new DomainError('invalid_input', `status: must be one of ${receiptStatuses.join(', ')}`, { field: 'status' });
  }
  const outcome = await changeStatus(deps, {
    wallet,
    receiptId: input.id,
    status: input.status as ReceiptStatus,
    actor: 'merchant',
    acceptedAt,
    ...(input.failureCode && { failure: { code: input.failureCode } }),
  });
  const view = toStatusView(outcome.receipt);
  return outcome.ignored ? { ok: true as const, ignored: true as const, reason: outcome.reason, ...view } : { ok: true as const, ...view };
};
