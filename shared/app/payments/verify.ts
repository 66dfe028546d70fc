/**
 * The one way a receipt becomes `paid`: a transaction on the deployment's chain, judged by the rules
 * of shared/domain/payment.ts. The portal reports the hash its wallet gave it; the watcher finds
 * transfers by their exact amount; both end here.
 */
import { DomainError } from '../../domain/errors';
import {
  isStale,
  judgePayment,
  quoteAmountClaimId,
  ZERO_ADDRESS,
  type FeedPrice,
  type Judgement,
  type MinedTransaction,
  type PaymentRecord,
} from '../../domain/payment';
import type { PaymentAnswer } from '../../domain/portal-views';
import { paymentProofClaimId } from '../../domain/x402';
import type { Receipt } from '../../domain/receipt';
import { DependencyUnavailableError } from '../../ports/errors';
import type { AppDeps } from '../deps';
import { withEtagRetry } from '../etag-retry';
import { loadMerchant } from '../merchants';
import { changeStatus } from '../receipt-status';
import { claimPayment, paysSomethingElse, receiptOwner } from './ledger';
import { findReceipt, quoteTokenAddress, type PortalDeps } from './portal';
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
 * that cannot be read, or is stale or at its bounds, answers an error (the watcher tries again on its next run).
 */
const priceIfLate = async (deps: VerifyDeps, receipt: Receipt, split: string, tx: MinedTransaction): Promise<FeedPrice | undefined> => {
  // Only ETH that reached the split needs the price: a token payment is decided without the feed,
  // so a stale feed never holds up the watcher's stablecoin payments.
  const ethIn = tx.moves.some((move) => move.token.toLowerCase() === ZERO_ADDRESS && move.to.toLowerCase() === split);
  const lateEth = ethIn && (receipt.quotes ?? []).some((quote) => quote.token === 'ETH' && tx.blockTimestamp * 1000 > quote.expiresAt);
  if (!lateEth) return undefined;
  const price = await deps.chain!.ethUsdPrice();
  if (isStale(price, deps.clock.now(), deps.settings.payments.feedHeartbeatMs)) {
    throw new DomainError('price_stale', 'the ETH price feed is stale or at its bounds: this late ETH payment is decided once it answers a price again', { token: 'ETH' });
  }
  return price;
};

/**
 * The transaction without the transfers that are someone else's payment, whoever reports the hash
 * first: one the ledger gives to something else, one that carries another receipt's quoted amount
 * into this split, and one that carries out an x402 authorization the gate has a record of (made
 * before it settled, so never after a report of its hash). `paidElsewhere`: a transfer into the
 * split was left out as another's in the ledger or an agent's.
 */
const withoutOthersPayments = async (deps: VerifyDeps, receipt: Receipt, split: string, tx: MinedTransaction): Promise<MinedTransaction & { paidElsewhere: boolean }> => {
  const own = receiptOwner(receipt);
  const chainId = deps.chain!.chainId;
  const moves = [];
  // A transfer into the split that the ledger (or an x402 proof) gives to something else.
  let paidElsewhere = false;
  for (const move of tx.moves) {
    if (move.authorizationNonce !== undefined) {
      const proof = paymentProofClaimId(chainId, move.token, move.from, move.authorizationNonce);
      if (await deps.claims.get(proof, proof)) {
        paidElsewhere ||= move.to.toLowerCase() === split;
        continue;
      }
    }
    if (move.to.toLowerCase() === split) {
      if (await paysSomethingElse(deps, chainId, tx.hash, move.logIndex, own)) {
        paidElsewhere = true;
        continue;
      }
      const id = quoteAmountClaimId(deps.chain!.chainId, split, move.token, move.amount);
      const claim = await deps.claims.get(id, id);
      if (claim && claim.value.owner !== own) continue;
    }
    moves.push(move);
  }
  return { ...tx, moves, paidElsewhere };
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

  const [head, priceNow, judged] = await Promise.all([chain.blockNumber(), priceIfLate(deps, receipt, split.toLowerCase(), tx), withoutOthersPayments(deps, receipt, split.toLowerCase(), tx)]);
  /** The rules applied to the receipt as it is at `etag`: earlier underpayments are read with it. */
  const judge = (current: Receipt) =>
    judgePayment({
      tx: judged,
      head,
      receipt: { createdAt: current.createdAt, split, cents: Math.round(current.customerTotalUsd * 100), quotes: current.quotes ?? [] },
      earlier: earlierUnderpayments(deps, current),
      rules: { confirmations: deps.settings.payments.confirmations, slippageBps: deps.settings.payments.slippageBps },
      tokens: deps.settings.tokens,
      priceNow,
    });
  const first = judge(receipt);
  const now = deps.clock.now();
  switch (first.kind) {
    case 'unconfirmed':
      return answer('unconfirmed', receipt.status, { confirmations: first.confirmations, required: first.required });
    case 'not_a_payment':
      if (judged.paidElsewhere) throw new DomainError('transaction_already_used', `transaction ${txHash} already paid something else`, { field: 'txHash' });
      throw new DomainError('not_a_payment', first.reason, { field: 'txHash' });
    case 'before_receipt':
      throw new DomainError('not_a_payment', 'the transaction was mined before this receipt was made', { field: 'txHash' });
    default:
      break;
  }

  // One failed transaction fails one receipt, once; one transfer pays one: the ledger's claim, of the
  // transfers this payment counts (the quote's token into the split), so another payment in the same
  // transaction stays its own receipt's.
  const counted =
    first.kind === 'reverted'
      ? []
      : judged.moves.filter((move) => move.to.toLowerCase() === split.toLowerCase() && move.token.toLowerCase() === quoteTokenAddress(first.quote)).map((move) => move.logIndex);
  await claimPayment(deps, chain.chainId, txHash, receiptOwner(receipt), counted);
  if (first.kind === 'reverted') return answer('reverted', await failWith(deps, receipt, 'PORTAL_CHAIN_TX_REVERTED', recordOf(first, tx, now)));

  // An underpayment is decided under the receipt's ETag: two short transfers verified at once each
  // see the other's record, so the one that completes the sum pays the receipt.
  const decided = await withEtagRetry<{ judgement: Judgement; done?: PaymentAnswer }>(
    async ({ write }) => {
      const latest = await findReceipt(deps, receiptId);
      const same = (latest.value.payments ?? []).find((known) => known.txHash === txHash);
      if (same) return { judgement: first, done: recorded(latest.value.status, same) };
      const judgement = judge(latest.value);
      if (judgement.kind !== 'underpaid') return { judgement };
      const record = recordOf(judgement, tx, now);
      await write(() => deps.receipts.replace(latest.value.wallet, { ...latest.value, payments: [...(latest.value.payments ?? []), record] }, latest.etag));
      return { judgement, done: answer('underpaid', latest.value.status, { received: judgement.received.toString(), expected: judgement.expected.toString() }) };
    },
    {
      exhausted: () => {
        throw new DomainError('conflict', 'the receipt kept changing; try again');
      },
    },
  );
  if (decided.done) return decided.done;
  const judgement = decided.judgement;
  if (judgement.kind !== 'paid' && judgement.kind !== 'slippage') throw new Error(`unexpected judgement ${judgement.kind} after the first`);
  const record = recordOf(judgement, tx, now);
  const amounts = { received: judgement.received.toString(), expected: judgement.expected.toString() };
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
