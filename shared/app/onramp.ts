/**
 * Card payments through an on-ramp provider. The buyer's portal opens a provider session for the
 * receipt's USDC quote, delivered to the merchant's split: `paid` still comes from the chain (the
 * watcher, or the delivery's hash checked at once). The provider's webhooks move only the tracking
 * statuses (`checkout_initialized`, `checkout_success`) and `failed`, with the provider's code mapped
 * to the PORTAL_* registry.
 */
import { DomainError } from '../domain/errors';
import { portalCodeFor } from '../domain/onramp-codes';
import type { QuoteView } from '../domain/portal-views';
import type { OnrampRecord, Receipt, ReceiptStatus } from '../domain/receipt';
import { DependencyUnavailableError, DuplicateKeyError } from '../ports/errors';
import { OnrampSignatureError, type OnrampEvent, type OnrampProviderName } from '../ports/onramp';
import type { AppDeps } from './deps';
import { withEtagRetry } from './etag-retry';
import { findReceipt, quoteFor } from './payments/portal';
import { verifyPayment, type VerifyDeps } from './payments/verify';
import { changeStatus } from './receipt-status';

export type OnrampDeps = VerifyDeps & Pick<AppDeps, 'onramp'>;

/** Applied event ids kept on a receipt: far more than one session's events. */
const MAX_APPLIED_EVENTS = 50;

/** A session id's claim: it names the receipt the session was opened for (one provider, one id). */
export const onrampSessionClaimId = (provider: string, sessionId: string) => `onramp:${provider}:${sessionId}`;

export interface OnrampAnswer {
  ok: true;
  provider: OnrampProviderName;
  sessionId: string;
  /** The provider's page: the portal sends the buyer there. */
  url: string;
  clientSecret: string | null;
  /** The USDC quote the provider delivers. */
  quote: QuoteView;
}

const providerOf = (deps: Pick<AppDeps, 'onramp'>) => {
  if (!deps.onramp) throw new DependencyUnavailableError('onramp', 'card payments are not offered on this deployment');
  return deps.onramp;
};

/** Claims the session id for this receipt; false when another receipt holds it (the id is then not unique to this one). */
const claimSession = async (deps: OnrampDeps, provider: string, sessionId: string, receipt: Receipt): Promise<boolean> => {
  const id = onrampSessionClaimId(provider, sessionId);
  const owner = `${receipt.wallet}:${receipt.receiptId}`;
  try {
    await deps.claims.create(id, { id, owner, createdAt: deps.clock.now() });
    return true;
  } catch (error) {
    if (!(error instanceof DuplicateKeyError)) throw error;
    return (await deps.claims.get(id, id))?.value.owner === owner;
  }
};

const writeReceipt = (deps: OnrampDeps, receiptId: string, change: (current: Receipt) => Receipt) =>
  withEtagRetry<Receipt>(
    async ({ write }) => {
      const latest = await findReceipt(deps, receiptId);
      const next = change(latest.value);
      await write(() => deps.receipts.replace(latest.value.wallet, next, latest.etag));
      return next;
    },
    {
      exhausted: () => {
        throw new DomainError('conflict', 'the receipt kept changing; try again');
      },
    },
  );

/**
 * Opens (or reopens) a provider session for the receipt: its USDC quote (made if there is none),
 * to the merchant's split, with the receipt's `redirect_url`. A session already open for the same
 * quote is answered again, so a double click opens one session.
 */
export const openOnrampSession = async (deps: OnrampDeps, receiptId: string, customerIp: string | null): Promise<OnrampAnswer> => {
  const provider = providerOf(deps);
  const quote = await quoteFor(deps, receiptId, 'USDC');
  const { value: receipt } = await findReceipt(deps, receiptId);
  const open = receipt.onramp;
  if (open && open.provider === provider.name && open.quoteId === quote.quoteId && receipt.status !== 'failed') {
    return { ok: true, provider: provider.name, sessionId: open.sessionId, url: open.redirectTo, clientSecret: null, quote };
  }
  const session = await provider.createSession({
    receiptId,
    quoteId: quote.quoteId,
    walletAddress: quote.payTo,
    chainId: quote.chainId,
    tokenAddress: quote.tokenAddress!,
    destinationAmount: quote.display,
    destinationAmountAtomic: quote.amount,
    customerTotalUsd: receipt.customerTotalUsd,
    redirectUrl: receipt.redirectUrl,
    customerIp,
  });
  const unique = await claimSession(deps, provider.name, session.sessionId, receipt);
  const record: OnrampRecord = {
    provider: provider.name,
    sessionId: session.sessionId,
    quoteId: quote.quoteId,
    redirectTo: session.redirectTo,
    createdAt: deps.clock.now(),
    appliedEvents: receipt.onramp?.appliedEvents ?? [],
  };
  await writeReceipt(deps, receiptId, (current) => ({
    ...current,
    onramp: record,
    onrampSessionId: session.sessionId,
    isOnrampSessionUnique: unique,
    onrampSourceAmountUsd: null,
  }));
  return { ok: true, provider: provider.name, sessionId: session.sessionId, url: session.redirectTo, clientSecret: session.clientSecret, quote };
};

/** The receipt a provider session was opened for, or undefined for a session this service never opened. */
export const receiptOfSession = async (deps: Pick<AppDeps, 'claims' | 'receipts'>, provider: string, sessionId: string) => {
  const id = onrampSessionClaimId(provider, sessionId);
  const owner = (await deps.claims.get(id, id))?.value.owner;
  if (!owner) return undefined;
  const at = owner.lastIndexOf(':');
  return (await deps.receipts.get(owner.slice(0, at), owner.slice(at + 1)))?.value;
};

export type OnrampEventAnswer = { ok: true; applied: true; status: ReceiptStatus } | { ok: true; applied: false; reason: string };

const withEvent = (current: Receipt, event: OnrampEvent): Partial<Receipt> => ({
  onramp: current.onramp ? { ...current.onramp, appliedEvents: [...current.onramp.appliedEvents, event.eventId].slice(-MAX_APPLIED_EVENTS) } : current.onramp,
  ...(event.sourceAmountUsd !== null && { onrampSourceAmountUsd: event.sourceAmountUsd }),
});

const statusFor: Record<Exclude<OnrampEvent['kind'], 'delivered'>, ReceiptStatus> = {
  session_created: 'checkout_initialized',
  payment_processing: 'checkout_success',
  rejected: 'failed',
};

/**
 * A provider's webhook: verified with the provider's own scheme (a forged, altered or stale one is
 * refused and changes nothing), then applied once per event id. Events of a session the receipt has
 * since replaced change no status; a delivery's transaction is checked on chain at once (the watcher
 * finds it anyway).
 */
export const applyOnrampWebhook = async (
  deps: OnrampDeps,
  providerName: string,
  rawBody: string,
  headers: { get(name: string): string | null },
): Promise<OnrampEventAnswer> => {
  const provider = deps.onramp;
  if (!provider || provider.name !== providerName) throw new DomainError('not_found', `no on-ramp provider ${providerName} here`);
  let event: OnrampEvent | null;
  try {
    event = await provider.readWebhook(rawBody, headers, deps.clock.now());
  } catch (error) {
    if (error instanceof OnrampSignatureError) throw new DomainError('invalid_signature', `the ${providerName} webhook does not verify: ${error.message}`);
    throw error;
  }
  if (!event) return { ok: true, applied: false, reason: 'an event the service does not use' };
  const receipt = await receiptOfSession(deps, provider.name, event.sessionId);
  // Answered 2xx: the provider would otherwise retry an event that can never apply.
  if (!receipt) return { ok: true, applied: false, reason: `no receipt has session ${event.sessionId}` };
  if (receipt.onramp?.appliedEvents.includes(event.eventId)) return { ok: true, applied: false, reason: `event ${event.eventId} was applied already` };
  const current = receipt.onramp?.sessionId === event.sessionId;

  if (event.kind === 'delivered') {
    const updated = await writeReceipt(deps, receipt.receiptId, (latest) => ({ ...latest, ...withEvent(latest, event) }));
    if (event.transactionHash) {
      // The chain decides: a transfer not yet confirmed is left to the watcher.
      await verifyPayment(deps, receipt.receiptId, event.transactionHash).catch(() => undefined);
    }
    const latest = await findReceipt(deps, receipt.receiptId).catch(() => undefined);
    return { ok: true, applied: true, status: latest?.value.status ?? updated.status };
  }
  if (!current) return { ok: true, applied: false, reason: `session ${event.sessionId} was replaced by a newer one` };
  const status = statusFor[event.kind];
  const outcome = await changeStatus(deps, {
    wallet: receipt.wallet,
    receiptId: receipt.receiptId,
    status,
    actor: 'service',
    ...(status === 'failed' && {
      failure: { code: portalCodeFor(provider.name, event.providerErrorCode), providerErrorCode: event.providerErrorCode, providerRequestId: event.providerRequestId },
    }),
    facts: (latest) => withEvent(latest, event),
  });
  if (outcome.ignored) return { ok: true, applied: false, reason: outcome.reason };
  return { ok: true, applied: true, status: outcome.receipt.status };
};
