/**
 * The one way a receipt becomes `paid`: a transaction on the deployment's chain, judged by the rules
 * of shared/domain/payment.ts. The portal reports the hash its wallet gave it; the watcher finds
 * transfers into the receipt's deposit address; a card provider names its delivery; all end here. A
 * transaction is judged by where its transfers went, never by who reports it.
 */
import { toCents } from '../../domain/money';
import { DomainError } from '../../domain/errors';
import {
  isStale,
  balanceCreditId,
  isBalanceCredit,
  judgePayment,
  UNKNOWN_SENDER,
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
const priceIfLate = async (deps: VerifyDeps, receipt: Receipt, payTo: string, tx: MinedTransaction): Promise<FeedPrice | undefined> => {
  // Only ETH that reached the address needs the price: a token payment is decided without the feed,
  // so a stale feed never holds up the watcher's stablecoin payments.
  const ethIn = tx.moves.some((move) => move.token.toLowerCase() === ZERO_ADDRESS && move.to.toLowerCase() === payTo);
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
 * first: one the ledger gives to something else, and one that carries out an x402 authorization the
 * gate has a record of (made before it settled, so never after a report of its hash). `paidElsewhere`:
 * a transfer into the receipt's address was left out as another's in the ledger or an agent's.
 */
const withoutOthersPayments = async (deps: VerifyDeps, receipt: Receipt, payTo: string, tx: MinedTransaction): Promise<MinedTransaction & { paidElsewhere: boolean }> => {
  const own = receiptOwner(receipt);
  const chainId = deps.chain!.chainId;
  const moves = [];
  let paidElsewhere = false;
  for (const move of tx.moves) {
    const ours = move.to.toLowerCase() === payTo;
    if (move.authorizationNonce !== undefined) {
      const proof = paymentProofClaimId(chainId, move.token, move.from, move.authorizationNonce);
      if (await deps.claims.get(proof, proof)) {
        paidElsewhere ||= ours;
        continue;
      }
    }
    if (ours && (await paysSomethingElse(deps, chainId, tx.hash, move.logIndex, own))) {
      paidElsewhere = true;
      continue;
    }
    moves.push(move);
  }
  return { ...tx, moves, paidElsewhere };
};

/** A payer the chain names, or null for nobody's (a balance credit's sender is not known). */
const knownPayer = (payer: string) => (payer === UNKNOWN_SENDER ? null : payer);

const recordOf = (judgement: Extract<Judgement, { quote: unknown }> | { kind: 'reverted' }, tx: MinedTransaction, now: number): PaymentRecord => {
  if (judgement.kind === 'reverted') {
    return { txHash: tx.hash, token: null, payer: lower(tx.from), amount: '0', expected: null, blockNumber: tx.blockNumber, outcome: 'reverted', at: now };
  }
  const outcome = judgement.kind === 'paid' ? (judgement.overpaid > 0n ? 'overpaid' : 'paid') : judgement.kind;
  return {
    txHash: tx.hash,
    token: judgement.quote.token,
    payer: knownPayer(judgement.payer),
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

/** Other wallets' reverted transactions a receipt records at most (each costs its sender only gas). */
export const MAX_FOREIGN_REVERTS = 20;
/** Records a receipt keeps at most (some 250 bytes each): far more than any buyer makes, far inside a document. */
export const MAX_PAYMENT_RECORDS = 500;

/** Who asks: `page` is the payment page reporting its wallet's hash, the one report whose wallet's failures are the receipt's. */
export interface VerifyOptions {
  reporter?: 'page';
}

/**
 * The wallet that paid a receipt, for its refund: the first payer of the token that paid it (an
 * underpayment's, when another wallet topped it up), so a stranger's top-up never makes the refund theirs.
 */
const firstPayer = (receipt: Receipt, token: string, payer: string) => {
  const first = (receipt.payments ?? []).find((record) => record.outcome === 'underpaid' && record.token === token);
  return first ? first.payer : knownPayer(payer);
};

/**
 * Verifies a transaction as a payment of a receipt and applies what it decides: `paid` (with the
 * hash, payer, token, amount and time; stock committed), an underpayment recorded (still unpaid), the
 * page's own wallet's late ETH beyond the slippage tolerance or its reverted payment → `failed`
 * (anyone else's is only recorded). A transaction that pays nothing of this receipt is refused and
 * changes nothing.
 */
export const verifyPayment = (deps: VerifyDeps, receiptId: string, hash: string, options: VerifyOptions = {}): Promise<PaymentAnswer> =>
  decide(deps, receiptId, lower(hash), () => deps.chain!.transaction(lower(hash)), options);

/**
 * ETH a deposit address received in a block that no transaction to it explains (a contract wallet
 * sent it on): the balance is the truth, so it is judged as a transfer of that amount at that block,
 * from a sender nobody knows; its record says so, and the receipt names no transaction for it.
 */
export const creditBalanceRise = (deps: VerifyDeps, receiptId: string, rise: { address: string; amount: bigint; blockNumber: number; blockTimestamp: number }): Promise<PaymentAnswer> => {
  const address = lower(rise.address);
  const tx: MinedTransaction = {
    hash: balanceCreditId(address, rise.blockNumber),
    status: 1,
    from: UNKNOWN_SENDER,
    to: address,
    data: '0x',
    blockNumber: rise.blockNumber,
    blockTimestamp: rise.blockTimestamp,
    moves: [{ token: ZERO_ADDRESS, from: UNKNOWN_SENDER, to: address, amount: rise.amount.toString(), logIndex: -1 }],
  };
  return decide(deps, receiptId, tx.hash, async () => tx, {});
};

const decide = async (deps: VerifyDeps, receiptId: string, txHash: string, read: () => Promise<MinedTransaction | 'pending' | undefined>, options: VerifyOptions): Promise<PaymentAnswer> => {
  const chain = deps.chain;
  if (!chain) throw new DependencyUnavailableError('chain', 'payments are not configured on this deployment');
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

  const tx = await read();
  if (tx === undefined) throw new DomainError('transaction_not_found', `transaction ${txHash} is not on chain ${chain.chainId}`, { field: 'txHash' });
  if (tx === 'pending') return answer('pending');
  const payTo = receipt.deposit?.address.toLowerCase();
  if (!payTo) throw new DomainError('not_a_payment', 'this receipt has no deposit address yet (none was quoted), so nothing has paid it', { field: 'txHash' });

  const [head, priceNow, judged] = await Promise.all([chain.blockNumber(), priceIfLate(deps, receipt, payTo, tx), withoutOthersPayments(deps, receipt, payTo, tx)]);
  /** The rules applied to the receipt as it is at `etag`: earlier underpayments are read with it. */
  const judge = (current: Receipt) =>
    judgePayment({
      tx: judged,
      head,
      receipt: { createdAt: current.createdAt, payTo, cents: toCents(current.customerTotalUsd), quotes: current.quotes ?? [] },
      earlier: earlierUnderpayments(deps, current),
      rules: { confirmations: deps.settings.payments.confirmations, slippageBps: deps.settings.payments.slippageBps },
      tokens: deps.settings.tokens,
      priceNow,
      ...(current.connectedWallet && { connectedWallet: current.connectedWallet }),
      pageReport: options.reporter === 'page',
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

  // What one receipt records is bounded, so nobody can grow it past what the store holds with
  // transfers that cost a fraction of a cent in gas: less than a cent's worth of the token is dust
  // (no buyer pays so; it is not counted, and the merchant sees it unattributed), and a receipt keeps
  // at most MAX_FOREIGN_REVERTS of other wallets' failed transactions and MAX_PAYMENT_RECORDS records
  // in all. The transfer that completes the sum is always recorded: it makes the receipt paid.
  const records = receipt.payments ?? [];
  if (first.kind === 'reverted' && !first.own) {
    // Someone else's failed transaction aimed at this address changes nothing but a record.
    if (records.filter((record) => record.outcome === 'reverted').length < MAX_FOREIGN_REVERTS) await appendRecord(deps, receipt.wallet, receiptId, recordOf(first, tx, now));
    return answer('reverted');
  }
  if (first.kind !== 'reverted') {
    if (first.own * BigInt(toCents(receipt.customerTotalUsd)) < BigInt(first.quote.amount)) {
      throw new DomainError('not_a_payment', 'the transaction brought less than a cent’s worth of the token: dust, not counted', { field: 'txHash' });
    }
    if (first.kind === 'underpaid' && records.length >= MAX_PAYMENT_RECORDS) {
      throw new DomainError('not_a_payment', `this receipt has recorded ${records.length} transfers, its most: only a transfer that completes the amount due is recorded now`, { field: 'txHash' });
    }
  }
  // One failed transaction fails one receipt, once; one transfer pays one: the ledger's claim, of the
  // transfers this payment counts (the quote's token into the receipt's address), so another payment
  // in the same transaction stays its own receipt's.
  const counted =
    first.kind === 'reverted'
      ? []
      : judged.moves.filter((move) => move.to.toLowerCase() === payTo && move.token.toLowerCase() === quoteTokenAddress(first.quote)).map((move) => move.logIndex);
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
      // A receipt paid already: whatever comes after is extra, for the merchant to refund (it adds to nothing).
      const extra = latest.value.paidAt !== undefined && latest.value.paidAt !== null;
      const record = { ...recordOf(judgement, tx, now), ...(extra && { outcome: 'overpaid' as const }) };
      await write(() => deps.receipts.replace(latest.value.wallet, { ...latest.value, payments: [...(latest.value.payments ?? []), record] }, latest.etag));
      return { judgement, done: answer(extra ? 'overpaid' : 'underpaid', latest.value.status, { received: judgement.received.toString(), expected: judgement.expected.toString() }) };
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
      transactionHash: isBalanceCredit(txHash) ? null : txHash,
      buyerWallet: firstPayer(current, judgement.quote.token, judgement.payer),
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
