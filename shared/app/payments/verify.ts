/**
 * The one way a receipt becomes `paid`: a transaction on the deployment's chain, judged by the rules
 * of shared/domain/payment.ts. The portal reports the hash its wallet gave it; the watcher finds
 * transfers by their exact amount; both end here.
 */
import { DomainError } from '../../domain/errors';
import {
  isStale,
  judgePayment,
  paymentTxClaimId,
  quoteAmountClaimId,
  ZERO_ADDRESS,
  type FeedPrice,
  type Judgement,
  type MinedTransaction,
  type PaymentRecord,
} from '../../domain/payment';
import type { PaymentAnswer } from '../../domain/portal-views';
import type { Receipt } from '../../domain/receipt';
import { DependencyUnavailableError, DuplicateKeyError } from '../../ports/errors';
import type { AppDeps } from '../deps';
import { withEtagRetry } from '../etag-retry';
import { loadMerchant } from '../merchants';
import { changeStatus } from '../receipt-status';
import { findReceipt, type PortalDeps } from './portal';
import { commitStock } from './stock';

export type VerifyDeps = PortalDeps & Pick<AppDeps, 'inventory'>;

const lower = (text: string) => text.toLowerCase();

/** What earlier underpayments brought in, per token address: later transfers add up to the quote. */
const earlierUnderpayments = (deps: Pick<AppDeps, 'settings'>, receipt: Receipt): Record<string, bigint> => {
  const sums: Record<string, bigint> = {};
  for (const record of receipt.payments ?? []) {
    if (record.outcome !== 'underpaid' || !record.token) continue;
    const address = lower(deps.settings.tokens.find((token) => token.symbol === record.token)?.address ?? ZERO_ADDRESS);
    sums[address] = (sums[address] ?? 0n) + BigInt(record.amount);
  }
  return sums;
};

/**
 * The feed now, only when a late ETH payment needs it. Nothing is decided without a price: a feed
 * that cannot be read, or is stale, answers an error (the watcher tries again on its next run).
 */
const priceIfLate = async (deps: VerifyDeps, receipt: Receipt, tx: MinedTransaction): Promise<FeedPrice | undefined> => {
  const lateEth = (receipt.quotes ?? []).some((quote) => quote.token === 'ETH' && tx.blockTimestamp * 1000 > quote.expiresAt);
  if (!lateEth) return undefined;
  const price = await deps.chain!.ethUsdPrice();
  if (isStale(price, deps.clock.now(), deps.settings.payments.feedHeartbeatMs)) {
    throw new DomainError('price_stale', 'the ETH price feed is stale: this late ETH payment is decided once it answers again', { token: 'ETH' });
  }
  return price;
};

/**
 * The transaction without the transfers that carry another receipt's quoted amount into this split:
 * those are that receipt's payment, whoever reports the hash first.
 */
const withoutOthersPayments = async (deps: VerifyDeps, receipt: Receipt, split: string, tx: MinedTransaction): Promise<MinedTransaction> => {
  const own = `${receipt.wallet}:${receipt.receiptId}`;
  const moves = [];
  for (const move of tx.moves) {
    if (move.to.toLowerCase() === split) {
      const id = quoteAmountClaimId(deps.chain!.chainId, split, move.token, move.amount);
      const claim = await deps.claims.get(id, id);
      if (claim && claim.value.owner !== own) continue;
    }
    moves.push(move);
  }
  return { ...tx, moves };
};

/** One transaction pays one receipt: claims the hash for this receipt (a repeat for the same receipt is fine). */
const claimHash = async (deps: VerifyDeps, receipt: Receipt, hash: string) => {
  const id = paymentTxClaimId(deps.chain!.chainId, hash);
  const owner = `${receipt.wallet}:${receipt.receiptId}`;
  try {
    await deps.claims.create(id, { id, owner, createdAt: deps.clock.now() });
  } catch (error) {
    if (!(error instanceof DuplicateKeyError)) throw error;
    const held = await deps.claims.get(id, id);
    if (held?.value.owner !== owner) {
      throw new DomainError('transaction_already_used', `transaction ${hash} already paid another receipt`, { field: 'txHash' });
    }
  }
};

const recordOf = (judgement: Extract<Judgement, { quote: unknown }> | { kind: 'reverted' }, tx: MinedTransaction, now: number): PaymentRecord => {
  if (judgement.kind === 'reverted') {
    return { txHash: tx.hash, token: null, payer: lower(tx.from), amount: '0', expected: null, blockNumber: tx.blockNumber, outcome: 'reverted', at: now };
  }
  const outcome = judgement.kind === 'paid' ? (judgement.overpaid > 0n ? 'overpaid' : 'paid') : judgement.kind;
  return {
    txHash: tx.hash,
    token: judgement.quote.token,
    payer: judgement.payer,
    // This transaction's own amount (earlier underpayments have records of their own).
    amount: judgement.own.toString(),
    expected: judgement.expected.toString(),
    blockNumber: tx.blockNumber,
    outcome,
    at: now,
  };
};

/** Adds a record to the receipt without changing its status (an underpayment; a second payment of a paid receipt). */
const appendRecord = (deps: VerifyDeps, wallet: string, receiptId: string, record: PaymentRecord) =>
  withEtagRetry<void>(
    async ({ write }) => {
      const latest = await deps.receipts.get(wallet, receiptId);
      if (!latest || (latest.value.payments ?? []).some((known) => known.txHash === record.txHash)) return;
      await write(() => deps.receipts.replace(wallet, { ...latest.value, payments: [...(latest.value.payments ?? []), record] }, latest.etag));
    },
    {
      exhausted: () => {
        throw new DomainError('conflict', 'the receipt kept changing; try again');
      },
    },
  );

const withRecord = (record: PaymentRecord) => (current: Receipt) => ({
  payments: (current.payments ?? []).some((known) => known.txHash === record.txHash) ? current.payments : [...(current.payments ?? []), record],
});

/** Fails the receipt with a chain code and the transaction's record; one that cannot fail now (paid already) still keeps the record. */
const failWith = async (deps: VerifyDeps, receipt: Receipt, code: 'PORTAL_CHAIN_TX_REVERTED' | 'PORTAL_CHAIN_SLIPPAGE_EXCEEDED', record: PaymentRecord) => {
  const outcome = await changeStatus(deps, { wallet: receipt.wallet, receiptId: receipt.receiptId, status: 'failed', actor: 'service', failure: { code }, facts: withRecord(record) });
  if (outcome.ignored) await appendRecord(deps, receipt.wallet, receipt.receiptId, record);
  return outcome.receipt.status;
};

/**
 * Verifies a transaction as a payment of a receipt and applies what it decides: `paid` (with the
 * hash, payer, token, amount and time; stock committed), an underpayment recorded (still unpaid), a
 * late ETH payment beyond the slippage tolerance or a reverted payment → `failed`. A transaction
 * that pays nothing of this receipt is refused and changes nothing.
 */
export const verifyPayment = async (deps: VerifyDeps, receiptId: string, hash: string): Promise<PaymentAnswer> => {
  const chain = deps.chain;
  if (!chain) throw new DependencyUnavailableError('chain', 'payments are not configured on this deployment');
  const txHash = lower(hash);
  const stored = await findReceipt(deps, receiptId);
  const receipt = stored.value;
  const answer = (outcome: PaymentAnswer['outcome'], status = receipt.status, extra: Partial<PaymentAnswer> = {}): PaymentAnswer => ({
    ok: true,
    receiptId,
    status,
    outcome,
    transactionHash: txHash,
    ...extra,
  });
  /** A transaction recorded before: what it was judged then. */
  const recorded = (status: Receipt['status'], known: PaymentRecord) =>
    answer('already_recorded', status, { recorded: known.outcome, received: known.amount, ...(known.expected && { expected: known.expected }) });
  const known = (receipt.payments ?? []).find((record) => record.txHash === txHash);
  if (known) return recorded(receipt.status, known);

  const tx = await chain.transaction(txHash);
  if (tx === undefined) throw new DomainError('transaction_not_found', `transaction ${txHash} is not on chain ${chain.chainId}`, { field: 'txHash' });
  if (tx === 'pending') return answer('pending');
  const merchant = await loadMerchant(deps, receipt.wallet);
  const split = (receipt.quotes ?? []).at(-1)?.payTo ?? merchant.split?.address;
  if (!split) throw new DomainError('not_a_payment', 'this receipt has no split to pay into', { field: 'txHash' });

  const [head, priceNow, judged] = await Promise.all([chain.blockNumber(), priceIfLate(deps, receipt, tx), withoutOthersPayments(deps, receipt, split.toLowerCase(), tx)]);
  const judgement = judgePayment({
    tx: judged,
    head,
    receipt: { createdAt: receipt.createdAt, split, cents: Math.round(receipt.customerTotalUsd * 100), quotes: receipt.quotes ?? [] },
    earlier: earlierUnderpayments(deps, receipt),
    rules: { confirmations: deps.settings.payments.confirmations, slippageBps: deps.settings.payments.slippageBps },
    tokens: deps.settings.tokens,
    priceNow,
  });
  const now = deps.clock.now();
  switch (judgement.kind) {
    case 'unconfirmed':
      return answer('unconfirmed', receipt.status, { confirmations: judgement.confirmations, required: judgement.required });
    case 'not_a_payment':
      throw new DomainError('not_a_payment', judgement.reason, { field: 'txHash' });
    case 'before_receipt':
      throw new DomainError('not_a_payment', 'the transaction was mined before this receipt was made', { field: 'txHash' });
    case 'reverted':
      // Claimed like a payment: one failed transaction fails one receipt, once.
      await claimHash(deps, receipt, txHash);
      return answer('reverted', await failWith(deps, receipt, 'PORTAL_CHAIN_TX_REVERTED', recordOf(judgement, tx, now)));
    default:
      break;
  }

  await claimHash(deps, receipt, txHash);
  const record = recordOf(judgement, tx, now);
  const amounts = { received: judgement.received.toString(), expected: judgement.expected.toString() };
  if (judgement.kind === 'underpaid') {
    await appendRecord(deps, receipt.wallet, receiptId, record);
    return answer('underpaid', receipt.status, amounts);
  }
  if (judgement.kind === 'slippage') return answer('slippage', await failWith(deps, receipt, 'PORTAL_CHAIN_SLIPPAGE_EXCEEDED', record), amounts);
  const outcome = await changeStatus(deps, {
    wallet: receipt.wallet,
    receiptId,
    status: 'paid',
    actor: 'service',
    facts: (current) => ({
      ...withRecord(record)(current),
      transactionHash: txHash,
      buyerWallet: judgement.payer,
      token: judgement.quote.token,
      amountPaid: judgement.received.toString(),
      amountOverpaid: judgement.overpaid > 0n ? judgement.overpaid.toString() : null,
      paidAt: now,
    }),
  });
  if (outcome.ignored) {
    // This very transaction was recorded meanwhile (the watcher and a report at once): one payment.
    const same = (outcome.receipt.payments ?? []).find((known) => known.txHash === txHash);
    if (same) return recorded(outcome.receipt.status, same);
    // Paid already (by another transaction): this one is recorded for the merchant to refund.
    await appendRecord(deps, receipt.wallet, receiptId, { ...record, outcome: 'overpaid' });
    return answer('overpaid', outcome.receipt.status, amounts);
  }
  await commitStock(deps, receipt.wallet, receiptId);
  return answer(record.outcome === 'overpaid' ? 'overpaid' : 'paid', outcome.receipt.status, amounts);
};
