/**
 * The sandbox provider's hosted checkout: what a tester sees after choosing "Pay by card" in the
 * portal, and what each outcome does. A real provider charges a card here; the sandbox lets the
 * tester pick the result: success sends the quoted test USDC to the split (the chain then makes the
 * receipt `paid`), anything else is a signed rejection with that outcome's provider code.
 */
import { DomainError } from '../domain/errors';
import { failureInfo } from '../domain/failures';
import { SANDBOX_UNKNOWN_CODE, portalCodeFor, sandboxCodes } from '../domain/onramp-codes';
import { formatUnits } from '../domain/units';
import { paymentUrlFor, type Receipt } from '../domain/receipt';
import { SandboxDeliveryError } from '../ports/onramp';
import type { AppDeps } from './deps';
import { loadMerchant } from './merchants';
import { receiptOfSession } from './onramp';
import { takeClaim } from './claims';
import { receiptOwner } from './payments/ledger';

export type SandboxDeps = Pick<AppDeps, 'onrampSandbox' | 'claims' | 'receipts' | 'merchants' | 'settings' | 'clock'>;

export const SANDBOX_SUCCESS = 'success';

export interface SandboxOutcome {
  value: string;
  label: string;
  /** The PORTAL_* code the service will record (null for success). */
  portalCode: string | null;
}

/** Every outcome a tester can pick: success, each mapped code, and one code no table knows. */
export const sandboxOutcomes: SandboxOutcome[] = [
  { value: SANDBOX_SUCCESS, label: 'Approve the card and deliver the USDC', portalCode: null },
  ...Object.entries(sandboxCodes).map(([value, code]) => ({ value, label: failureInfo(code).reason, portalCode: code })),
  { value: SANDBOX_UNKNOWN_CODE, label: 'An error the provider does not explain', portalCode: portalCodeFor('sandbox', SANDBOX_UNKNOWN_CODE) },
];

/** What the sandbox charges the card: the USDC plus a card fee of 2.9 % and $0.30 (as a card on-ramp would), in cents. */
export const sandboxCharge = (usdc: number) => Math.round(usdc * 1.029 * 100 + 30) / 100;

export interface SandboxCheckoutView {
  sessionId: string;
  receiptId: string;
  shopName: string;
  /** USDC the provider delivers (display units), and to where. */
  usdc: string;
  destination: string;
  chainId: number;
  /** What the card is charged. */
  chargeUsd: number;
  status: Receipt['status'];
  /** The session cannot take an outcome any more (paid, refunded, replaced by a newer session, or delivered). */
  closed: string | null;
  outcomes: SandboxOutcome[];
}

const sessionOf = async (deps: SandboxDeps, sessionId: string) => {
  if (!deps.onrampSandbox) throw new DomainError('not_found', 'the sandbox on-ramp is not in use here');
  const receipt = await receiptOfSession(deps, 'sandbox', sessionId);
  // A replaced session shows its receipt's current quote (the page then says it is closed).
  const quote = receipt?.quotes?.find((candidate) => candidate.quoteId === receipt.onramp?.quoteId);
  if (!receipt || !quote || !quote.tokenAddress) throw new DomainError('not_found', `no sandbox session ${sessionId}`);
  return { receipt, quote, desk: deps.onrampSandbox };
};

const deliveryClaimId = (sessionId: string) => `onramp-sandbox-delivery:${sessionId}`;

const closedReason = async (deps: SandboxDeps, receipt: Receipt, sessionId: string): Promise<string | null> => {
  if (['paid', 'reconciled', 'refund_requested', 'refunded'].includes(receipt.status)) return 'this receipt is paid';
  if (receipt.onramp?.sessionId !== sessionId) return 'a newer session replaced this one';
  if (receipt.onramp.state === 'rejected') return 'the provider refused this session';
  if (await deps.claims.get(deliveryClaimId(sessionId), deliveryClaimId(sessionId))) return 'the USDC of this session was sent';
  return null;
};

/** The checkout page's view; opening it is the buyer entering the provider's checkout (a `session_created` event, once). */
export const sandboxCheckout = async (deps: SandboxDeps, sessionId: string): Promise<SandboxCheckoutView> => {
  const { receipt, quote, desk } = await sessionOf(deps, sessionId);
  const closed = await closedReason(deps, receipt, sessionId);
  if (!closed) await desk.notify({ sessionId, kind: 'session_created', eventId: `evt_${sessionId}_created` });
  const merchant = await loadMerchant(deps, receipt.wallet);
  const usdc = formatUnits(quote.amount, quote.decimals);
  return {
    sessionId,
    receiptId: receipt.receiptId,
    shopName: merchant.shop.branding.name || receipt.brandName,
    usdc,
    destination: quote.payTo,
    chainId: quote.chainId,
    chargeUsd: sandboxCharge(Number(usdc)),
    status: receipt.status,
    closed,
    outcomes: sandboxOutcomes,
  };
};

/**
 * Plays the outcome the tester picked, as the provider would, and answers where the buyer goes next:
 * the receipt's `redirect_url` after a success (the provider's session is the only place it is used),
 * else back to the payment page, where the buyer can still pay by wallet.
 */
export const sandboxFinish = async (deps: SandboxDeps, sessionId: string, outcome: string): Promise<string> => {
  const { receipt, quote, desk } = await sessionOf(deps, sessionId);
  const pageUrl = paymentUrlFor(deps.settings.baseUrl, receipt.receiptId);
  if (!sandboxOutcomes.some((candidate) => candidate.value === outcome)) throw new DomainError('invalid_input', `outcome: must be one of ${sandboxOutcomes.map((o) => o.value).join(', ')}`, { field: 'outcome' });
  const closed = await closedReason(deps, receipt, sessionId);
  if (closed) throw new DomainError('conflict', `this sandbox session is closed: ${closed}`);
  if (outcome !== SANDBOX_SUCCESS) {
    await desk.notify({ sessionId, kind: 'rejected', providerErrorCode: outcome });
    return pageUrl;
  }
  // One delivery per session, however often the form is sent.
  const claim = deliveryClaimId(sessionId);
  if (!(await takeClaim(deps.claims, { id: claim, owner: receiptOwner(receipt), createdAt: deps.clock.now() })).taken) {
    throw new DomainError('conflict', 'the USDC of this session was sent already');
  }
  const chargeUsd = sandboxCharge(Number(formatUnits(quote.amount, quote.decimals)));
  let hash: string;
  try {
    await desk.notify({ sessionId, kind: 'payment_processing', sourceAmountUsd: chargeUsd, eventId: `evt_${sessionId}_processing` });
    hash = await desk.deliver(quote.tokenAddress!, quote.payTo, quote.amount);
  } catch (error) {
    // Nothing was broadcast: the session may try again. A broadcast transfer keeps the claim (never sent twice).
    if (!(error instanceof SandboxDeliveryError && error.sent)) await deps.claims.delete(claim, claim).catch(() => false);
    throw error;
  }
  // The service checks the delivery on chain; not yet confirmed (503), the watcher finds its exact amount.
  await desk.notify({ sessionId, kind: 'delivered', sourceAmountUsd: chargeUsd, transactionHash: hash, eventId: `evt_${sessionId}_delivered` }).catch(() => undefined);
  return receipt.redirectUrl ?? pageUrl;
};
