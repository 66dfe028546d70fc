/**
 * Card payments through an on-ramp provider. The buyer's portal opens a provider session for the
 * receipt's USDC quote, delivered to the merchant's split: `paid` still comes from the chain (the
 * watcher, or the delivery's hash checked at once). The provider's webhooks move only the tracking
 * statuses (`checkout_initialized`, `checkout_success`) and `failed`, with the provider's code mapped
 * to the PORTAL_* registry.
 */
import { DomainError } from '../domain/errors';
import { failureInfo } from '../domain/failures';
import { portalCodeFor } from '../domain/onramp-codes';
import type { PaymentAnswer, QuoteView } from '../domain/portal-views';
import { hasExpired, type OnrampRecord, type Receipt, type ReceiptStatus } from '../domain/receipt';
import { DependencyUnavailableError } from '../ports/errors';
import { OnrampRefusedError, OnrampSignatureError, type OnrampEvent, type OnrampProvider, type OnrampProviderName, type OnrampSession } from '../ports/onramp';
import type { AppDeps } from './deps';
import { withEtagRetry } from './etag-retry';
import { loadMerchant } from './merchants';
import { findReceipt, notPayableReason, quoteFor, refuse, toQuoteView } from './payments/portal';
import { verifyPayment, type VerifyDeps } from './payments/verify';
import { changeStatus } from './receipt-status';
import { holdClaim, takeClaim } from './claims';
import { receiptOwner } from './payments/ledger';

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
  return holdClaim(deps.claims, { id, owner: receiptOwner(receipt), createdAt: deps.clock.now() });
};

/** Writes what `change` makes of the receipt as it is now; `change` answering null writes nothing. */
const writeReceipt = (deps: OnrampDeps, receiptId: string, change: (current: Receipt) => Receipt | null) =>
  withEtagRetry<Receipt | null>(
    async ({ write }) => {
      const latest = await findReceipt(deps, receiptId);
      const next = change(latest.value);
      if (next) await write(() => deps.receipts.replace(latest.value.wallet, next, latest.etag));
      return next;
    },
    {
      exhausted: () => {
        throw new DomainError('conflict', 'the receipt kept changing; try again');
      },
    },
  );

const answerFor = (provider: OnrampProviderName, record: OnrampRecord, receipt: Receipt): OnrampAnswer => {
  const quote = receipt.quotes?.find((candidate) => candidate.quoteId === record.quoteId);
  if (!quote) throw new DomainError('conflict', 'the card session lost its quote; try again');
  return { ok: true, provider, sessionId: record.sessionId, url: record.redirectTo, clientSecret: null, quote: toQuoteView(quote) };
};

/** How long a second open waits for the first to finish making its session. */
const OPEN_WAIT_MS = 5_000;
/** How long an opener holds the receipt's card session lock at most. */
const OPEN_LOCK_MS = 60_000;

/**
 * Opens a provider session for the receipt: its USDC quote (made if there is none), to the merchant's
 * split, with the receipt's `redirect_url`. The buyer's current session is answered again unless the
 * provider rejected it: a session stays valid past its quote's lock (the quoted amount is claimed
 * for as long as a payment of it may arrive), and while one is being paid no second one opens (409),
 * so a card is never charged twice for a receipt. Two opens at once make one session.
 */
export const openOnrampSession = async (deps: OnrampDeps, receiptId: string, customerIp: string | null): Promise<OnrampAnswer> => {
  const provider = providerOf(deps);
  const { value: receipt } = await findReceipt(deps, receiptId);
  const reason = notPayableReason(deps, receipt, await loadMerchant(deps, receipt.wallet));
  if (reason) refuse(reason, receipt);
  const current = receipt.onramp;
  if (current && current.provider === provider.name && current.state !== 'rejected') {
    // The card was charged: a second session could charge it twice. A delivery that did not pay the
    // receipt (to the wrong address, short) is for the merchant and the provider to settle.
    if (current.state === 'processing') throw new DomainError('conflict', 'a card payment of this receipt is being delivered; wait for it to arrive');
    if (current.state === 'delivered') {
      throw new DomainError('conflict', 'a card payment of this receipt was delivered but did not pay it; pay what is due with crypto, or ask the merchant');
    }
    return answerFor(provider.name, current, receipt);
  }

  // One opener per session replaced (or the first): another one waits for its session. The lock
  // ends by itself, so an opener that stopped half way does not hold the receipt's card payments.
  const lock = `onramp-open:${receipt.receiptId}:${current?.sessionId ?? 'first'}`;
  const now = deps.clock.now();
  const claim = { id: lock, owner: receiptOwner(receipt), createdAt: now, expiresAt: now + OPEN_LOCK_MS };
  const locked = await takeClaim(deps.claims, claim);
  if (!locked.taken) {
    const held = locked.held;
    const expired = held !== undefined && (held.value.expiresAt ?? Infinity) <= now;
    // An expired lock is taken over (one taker wins its ETag); otherwise the opener holding it is waited for.
    const taken = expired && (await deps.claims.replace(lock, claim, held.etag).then(() => true, () => false));
    if (!taken) return waitForSession(deps, receiptId, provider.name, current);
  }
  return createAndRecordSession(deps, provider, receipt, lock, customerIp);
};

/** Waits for another opener's session; a conflict (409) when it does not come. */
const waitForSession = async (deps: OnrampDeps, receiptId: string, provider: OnrampProviderName, current: OnrampRecord | null | undefined): Promise<OnrampAnswer> => {
  for (const until = Date.now() + OPEN_WAIT_MS; Date.now() < until; await new Promise((resolve) => setTimeout(resolve, 100))) {
    const latest = (await findReceipt(deps, receiptId)).value;
    if (latest.onramp && latest.onramp.sessionId !== current?.sessionId) return answerFor(provider, latest.onramp, latest);
  }
  throw new DomainError('conflict', 'a card session for this receipt is being opened; try again');
};

/** Makes the session (holding `lock`) for a fresh USDC quote, and records it on the receipt. */
const createAndRecordSession = async (deps: OnrampDeps, provider: OnrampProvider, receipt: Receipt, lock: string, customerIp: string | null): Promise<OnrampAnswer> => {
  const receiptId = receipt.receiptId;
  const current = receipt.onramp;
  let session: OnrampSession;
  let quote: QuoteView;
  try {
    quote = await quoteFor(deps, receiptId, 'USDC');
    session = await provider.createSession({
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
  } catch (error) {
    // No session was made: the next click may try again.
    await deps.claims.delete(lock, lock).catch(() => false);
    if (error instanceof OnrampRefusedError) return refuseSession(deps, provider.name, receipt, error);
    if (error instanceof DomainError || error instanceof DependencyUnavailableError) throw error;
    throw new DependencyUnavailableError('onramp', `the card payment provider could not open a session: ${error instanceof Error ? error.message : String(error)}`);
  }
  const unique = await claimSession(deps, provider.name, session.sessionId, receipt);
  const record: OnrampRecord = {
    provider: provider.name,
    sessionId: session.sessionId,
    quoteId: quote.quoteId,
    redirectTo: session.redirectTo,
    createdAt: deps.clock.now(),
    state: 'created',
    appliedEvents: current?.appliedEvents ?? [],
  };
  await writeReceipt(deps, receiptId, (latest) => ({
    ...latest,
    onramp: record,
    onrampSessionId: session.sessionId,
    isOnrampSessionUnique: unique,
    onrampSourceAmountUsd: null,
  }));
  return { ok: true, provider: provider.name, sessionId: session.sessionId, url: session.redirectTo, clientSecret: session.clientSecret, quote };
};

/** The provider refused the session itself (a region it does not serve, say): the receipt fails with the mapped code, and the buyer is told (409). */
const refuseSession = async (deps: OnrampDeps, provider: OnrampProviderName, receipt: Receipt, refusal: OnrampRefusedError): Promise<never> => {
  const code = portalCodeFor(provider, refusal.providerCode);
  await changeStatus(deps, {
    wallet: receipt.wallet,
    receiptId: receipt.receiptId,
    status: 'failed',
    actor: 'service',
    failure: { code, providerErrorCode: refusal.providerCode, providerRequestId: refusal.providerRequestId },
  });
  throw new DomainError('onramp_refused', `the card payment provider refused: ${failureInfo(code).reason}. You can pay with crypto instead.`, {
    failureCode: code,
    providerErrorCode: refusal.providerCode,
  });
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

/** The session's state after an event of each kind, and the order states go in. */
const stateAfter: Record<OnrampEvent['kind'], OnrampRecord['state']> = { session_created: 'open', payment_processing: 'processing', delivered: 'delivered', rejected: 'rejected' };
const stateRank: Record<OnrampRecord['state'], number> = { created: 0, open: 1, processing: 2, delivered: 3, rejected: 3 };

const statusFor: Record<Exclude<OnrampEvent['kind'], 'delivered'>, ReceiptStatus> = {
  session_created: 'checkout_initialized',
  payment_processing: 'checkout_success',
  rejected: 'failed',
};

/**
 * Why an event changes nothing, read on the receipt as it is about to be written: applied already,
 * about a session the buyer has replaced (only its delivery still counts), behind the session's
 * state (events come in any order; delivered and rejected are final), or about an expired receipt.
 */
const ignoredBecause = (deps: OnrampDeps, receipt: Receipt, event: OnrampEvent): string | null => {
  const record = receipt.onramp;
  if (!record) return `no card session is open for receipt ${receipt.receiptId}`;
  if (record.appliedEvents.includes(event.eventId)) return `event ${event.eventId} was applied already`;
  if (event.kind === 'delivered') return null;
  if (record.sessionId !== event.sessionId) return `session ${event.sessionId} was replaced by a newer one`;
  if (stateRank[stateAfter[event.kind]] <= stateRank[record.state]) return `session ${event.sessionId} is ${record.state} already`;
  if (hasExpired(receipt, deps.settings.payments.receiptExpiryMs, deps.clock.now())) return 'the receipt has expired';
  return null;
};

/** The receipt with the event recorded: its id, and the session's state and charge when it is the current session's. */
const withEvent = (current: Receipt, event: OnrampEvent): Partial<Receipt> => {
  const record = current.onramp!;
  const own = record.sessionId === event.sessionId;
  return {
    onramp: {
      ...record,
      appliedEvents: [...record.appliedEvents, event.eventId].slice(-MAX_APPLIED_EVENTS),
      ...(own && stateRank[stateAfter[event.kind]] > stateRank[record.state] && { state: stateAfter[event.kind] }),
    },
    ...(own && event.sourceAmountUsd !== null && { onrampSourceAmountUsd: event.sourceAmountUsd }),
  };
};

/** Verification answers that settle what a delivery's transaction is; anything else is asked again later. */
const SETTLED = new Set<PaymentAnswer['outcome']>(['paid', 'overpaid', 'underpaid', 'slippage', 'reverted', 'already_recorded']);

/**
 * A delivery: its transaction is checked on chain now. Only a settled answer records the event; an
 * unconfirmed or unknown transaction, or a chain that cannot be asked, answers 503, so the provider
 * sends the event again (the watcher also matches a delivery of the exact quoted amount).
 */
const applyDelivery = async (deps: OnrampDeps, receipt: Receipt, event: OnrampEvent): Promise<OnrampEventAnswer> => {
  if (event.transactionHash) {
    try {
      const answer = await verifyPayment(deps, receipt.receiptId, event.transactionHash);
      if (!SETTLED.has(answer.outcome)) throw new DependencyUnavailableError('chain', `the delivery ${event.transactionHash} is ${answer.outcome}; send the event again later`);
    } catch (error) {
      const settled = error instanceof DomainError && (error.code === 'not_a_payment' || error.code === 'transaction_already_used');
      if (error instanceof DomainError && error.code === 'transaction_not_found') {
        throw new DependencyUnavailableError('chain', `the delivery ${event.transactionHash} is not on chain yet; send the event again later`);
      }
      if (!settled) throw error;
    }
  }
  await writeReceipt(deps, receipt.receiptId, (latest) => (ignoredBecause(deps, latest, event) ? null : { ...latest, ...withEvent(latest, event) }));
  return { ok: true, applied: true, status: (await findReceipt(deps, receipt.receiptId)).value.status };
};

/**
 * A provider's webhook: verified with the provider's own scheme (a forged, altered or stale one is
 * refused and changes nothing), then applied once per event id, in the session's order, through the
 * one status service (the checks are made again on the receipt as it is written, so two copies of an
 * event arriving together apply once).
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
  const ignored = ignoredBecause(deps, receipt, event);
  if (ignored) return { ok: true, applied: false, reason: ignored };
  if (event.kind === 'delivered') return applyDelivery(deps, receipt, event);

  const status = statusFor[event.kind];
  const outcome = await changeStatus(deps, {
    wallet: receipt.wallet,
    receiptId: receipt.receiptId,
    status,
    actor: 'service',
    ...(status === 'failed' && {
      failure: { code: portalCodeFor(provider.name, event.providerErrorCode), providerErrorCode: event.providerErrorCode, providerRequestId: event.providerRequestId },
    }),
    guard: (latest) => ignoredBecause(deps, latest, event),
    facts: (latest) => withEvent(latest, event),
  });
  if (outcome.ignored) return { ok: true, applied: false, reason: outcome.reason };
  return { ok: true, applied: true, status: outcome.receipt.status };
};
