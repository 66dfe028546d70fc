/**
 * `POST /api/x402/orders`: an agent buys from a shop named by its slug, paying in USDC by x402. The
 * order is checked and priced exactly as `POST /api/orders` does, before any challenge (so a body
 * that cannot be priced answers its 4xx, never a 402); once the payment is settled to the shop's
 * split, the receipt is stored and made `paid` through the one status service, and stock is taken.
 */
import { DomainError, describeZodError } from '../../domain/errors';
import { newReceiptId } from '../../domain/receipt';
import { slugClaimId } from '../../domain/shop';
import { X402_ORDER_BOUNDS, X402OrderRequest, usdcOfCents } from '../../domain/x402-requests';
import { paymentUri, type PaymentRecord, type Quote } from '../../domain/payment';
import { formatUnits } from '../../domain/units';
import type { AppDeps } from '../deps';
import { prepareOrder, priceLines, storePricedReceipt } from '../orders';
import { changeStatus } from '../receipt-status';
import { receiptOwner } from '../payments/ledger';
import { commitStock } from '../payments/stock';
import { BoundedCache } from '../bounded-cache';
import { X402_HEADERS } from '../../domain/x402';
import { rememberAnswer, requirePayment, storedAnswerFor, type GateReply } from './gate';

const parse = (body: unknown) => {
  const items = (body as { items?: unknown } | null)?.items;
  if (!Array.isArray(items) || items.length === 0) throw new DomainError('items_required', 'at least one item is required', { field: 'items' });
  const parsed = X402OrderRequest.safeParse(body);
  if (!parsed.success) {
    const { field, message } = describeZodError(parsed.error);
    throw new DomainError('invalid_input', message, { field });
  }
  return parsed.data;
};

/**
 * What the agent paid, recorded as a quote (USDC, exact, to the split) like a portal payment's, so
 * everything that reads a paid receipt's terms (refunds: the token's contract and decimals) reads them alike.
 */
const paidTerms = (deps: AppDeps, split: string, amount: bigint, usd: number, now: number): Quote => {
  const usdc = deps.settings.tokens.find((token) => token.symbol === 'USDC')!;
  const payTo = split.toLowerCase();
  return {
    quoteId: `x402_${now.toString(36)}`,
    token: 'USDC',
    tokenAddress: usdc.address.toLowerCase(),
    chainId: deps.settings.chainId,
    payTo,
    amount: amount.toString(),
    decimals: usdc.decimals,
    usd,
    rate: 1,
    createdAt: now,
    expiresAt: now,
    uri: paymentUri({ chainId: deps.settings.chainId, payTo, tokenAddress: usdc.address.toLowerCase(), amount: amount.toString() }),
  };
};

/**
 * Challenges recently answered, by order: a challenge is only an offer (a proof is checked against
 * the price at the time it comes), so the same order asked again within a moment gets the same
 * offer without its store reads. Bounded in entries and bytes, as every cache here.
 */
const recentChallenges = new WeakMap<object, BoundedCache<GateReply>>();
const CHALLENGE_TTL_MS = 2_000;
const CHALLENGE_CACHE_LIMITS = { maxEntries: 1_000, maxBytes: 4 * 1024 * 1024, sizeOf: (reply: GateReply) => 2 * JSON.stringify(reply).length };

const carriesProof = (headers: { get(name: string): string | null }) =>
  [X402_HEADERS.paymentV1, X402_HEADERS.paymentV2].some((name) => headers.get(name) !== null);

export const x402Order = async (deps: AppDeps, headers: { get(name: string): string | null }, body: unknown) => {
  const request = parse(body);
  // A proof answered before gets that answer, whatever the price or stock now.
  if (carriesProof(headers)) {
    const answered = await storedAnswerFor(deps, headers);
    if (answered) return answered;
  }
  let cache = recentChallenges.get(deps.claims);
  if (!cache) recentChallenges.set(deps.claims, (cache = new BoundedCache(CHALLENGE_CACHE_LIMITS)));
  const key = JSON.stringify([request.shopSlug, request.items, request.jurisdictionCode ?? null]);
  const offered = carriesProof(headers) ? undefined : cache.get(key);
  if (offered && deps.clock.now() - offered.at < CHALLENGE_TTL_MS) return offered.value;

  const claim = await deps.claims.get(slugClaimId(request.shopSlug), slugClaimId(request.shopSlug));
  if (!claim) throw new DomainError('not_found', `no shop ${request.shopSlug}`, { field: 'shopSlug' });
  const wallet = claim.value.owner;
  const { merchant, split, lines } = await prepareOrder(deps, wallet, { items: request.items, jurisdictionCode: request.jurisdictionCode });
  const { priced } = priceLines(merchant, split, { lines, jurisdictionCode: request.jurisdictionCode });
  const amount = usdcOfCents(priced.totalCents);
  // The floor is the deployment's (its settlement's gas), never below the interface document's.
  const minimum = deps.settings.relayer.x402MinOrder > X402_ORDER_BOUNDS.min ? deps.settings.relayer.x402MinOrder : X402_ORDER_BOUNDS.min;
  if (amount < minimum || amount > X402_ORDER_BOUNDS.max) {
    throw new DomainError('invalid_input', `items: an x402 order totals between ${formatUnits(minimum, 6)} and ${formatUnits(X402_ORDER_BOUNDS.max, 6)} USDC`, {
      field: 'items',
      amount: amount.toString(),
      minimum: minimum.toString(),
    });
  }

  // The receipt's id follows from the proof: a run cut short after settlement and let through again
  // (see GateOutcome) finds the receipt it made, so one payment never makes two receipts; the
  // settlement's transaction is claimed for that receipt in the payment ledger before it is paid.
  // It is a MAC of the proof's key under the service's secret, not a plain hash: the key is read off
  // the chain (payer and nonce), and an id anyone can compute could be taken first by a receipt of
  // their own (the paid order then never made) or used to read the order's page.
  const receiptIdOf = (proofKey: string) => newReceiptId(deps.sessionTokens.mac(`x402-receipt:${proofKey}`).slice(0, 16));
  const gate = await requirePayment(deps, headers, {
    resource: `${deps.settings.baseUrl}/api/x402/orders`,
    description: `Order from ${merchant.shop.branding.name || request.shopSlug}`,
    payTo: split.address.toLowerCase(),
    amount,
    ledgerOwner: (proofKey) => receiptOwner({ wallet, receiptId: receiptIdOf(proofKey) }),
  });
  if (gate.kind === 'challenge' && !carriesProof(headers)) cache.set(key, gate.reply, deps.clock.now());
  if (gate.kind !== 'paid') return gate.reply;

  // No key created it: the shop's webhook signing secret signs its webhooks.
  const receipt = await storePricedReceipt(deps, { wallet, subscriptionId: null }, merchant, split, {
    lines,
    jurisdictionCode: request.jurisdictionCode,
    source: 'order',
    receiptId: receiptIdOf(gate.proofKey),
  });
  const now = deps.clock.now();
  const record: PaymentRecord = { txHash: gate.transaction, token: 'USDC', payer: gate.payer, amount: amount.toString(), expected: amount.toString(), blockNumber: gate.blockNumber, outcome: 'paid', at: now };
  const outcome = await changeStatus(deps, {
    wallet,
    receiptId: receipt.receiptId,
    status: 'paid',
    actor: 'service',
    facts: { transactionHash: gate.transaction, buyerWallet: gate.payer, token: 'USDC', amountPaid: amount.toString(), amountOverpaid: null, paidAt: now, payments: [record], quotes: [paidTerms(deps, split.address, amount, receipt.customerTotalUsd, now)] },
  });
  await commitStock(deps, wallet, receipt.receiptId);
  const answer = {
    ok: true as const,
    receipt: { receiptId: receipt.receiptId, totalUsd: outcome.receipt.totalUsd, lineItems: outcome.receipt.lineItems, status: 'paid' as const, transactionHash: gate.transaction },
  };
  const paid = { status: 200, body: answer, headers: gate.responseHeaders };
  await rememberAnswer(deps, gate.proofKey, paid);
  return paid;
};
