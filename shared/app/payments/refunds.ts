/**
 * Refunds: the merchant sends them from its own wallet to the payer, in the token that paid; the
 * service says what to send (amount and EIP-681 URI), then verifies the transaction on chain as it
 * verifies a payment, and marks the receipt refunded.
 */
import { DomainError } from '../../domain/errors';
import { toCents } from '../../domain/money';
import { minedBefore, paymentUri, refundCursorId, ZERO_ADDRESS, type Quote } from '../../domain/payment';
import type { Receipt, ReceiptStatus, Refund } from '../../domain/receipt';
import { DependencyUnavailableError } from '../../ports/errors';
import type { AppDeps } from '../deps';
import { changeStatus } from '../receipt-status';
import { holdClaim } from '../claims';

type RequestDeps = Pick<AppDeps, 'receipts' | 'merchants' | 'queue' | 'clock' | 'ids' | 'settings'>;
/** What verifying needs: no more than the payment watcher has, so it can call `watchRefunds`. */
export type RefundVerifyDeps = Pick<AppDeps, 'receipts' | 'claims' | 'merchants' | 'chain' | 'settings' | 'clock' | 'queue' | 'chainState'>;

export interface RefundRequest {
  id: string;
  amountUsd?: number;
  reason?: string;
}

export type RefundOutcome = 'refunded' | 'unconfirmed' | 'pending';

/** Statuses a refund may be asked from (a refunded receipt only while something is left). */
const REFUNDABLE: readonly ReceiptStatus[] = ['paid', 'reconciled', 'refunded'];

/** One transaction refunds one refund: its hash is claimed under this id (owner: the receipt id). */
export const refundTxClaimId = (chainId: number, hash: string) => `refund-tx:${chainId}:${hash.toLowerCase()}`;

const lower = (text: string) => text.toLowerCase();

/** The refund sent for but not yet verified (at most one at a time). */
export const openRefund = (receipt: Receipt): Refund | undefined => (receipt.refunds ?? []).find((refund) => refund.txHash === null);

/** Cents still refundable: the customer total less what verified refunds gave back. */
export const refundableCents = (receipt: Receipt): number =>
  toCents(receipt.customerTotalUsd) - (receipt.refunds ?? []).reduce((sum, refund) => sum + (refund.refundedAt !== null ? toCents(refund.amountUsd) : 0), 0);

/** The quote of the token that paid (newest of that token): it names the token's contract, decimals and chain. */
const paidQuote = (receipt: Receipt): Quote | undefined =>
  receipt.token ? [...(receipt.quotes ?? [])].reverse().find((quote) => quote.token === receipt.token) : undefined;

/**
 * Atomic units for `cents` of a refund: the stablecoins at one dollar (cents × 10^(decimals − 2));
 * ETH as the same share of the ETH paid (amountPaid × cents / customer total cents, rounded down),
 * so no price is involved and a full refund returns exactly what was paid.
 */
export const refundUnits = (receipt: Receipt, quote: Quote, cents: number): bigint => {
  if (quote.token !== 'ETH') return BigInt(cents) * 10n ** BigInt(quote.decimals - 2);
  const paid = BigInt(receipt.amountPaid ?? '0');
  return (paid * BigInt(cents)) / BigInt(toCents(receipt.customerTotalUsd));
};

/**
 * A card session charged the buyer's card (processing or delivered): the payment came from the
 * provider's wallet, so a transfer back to the payer would refund the provider, not the card holder.
 * A session that never charged (created, open, rejected) leaves a wallet payment of the receipt as it is.
 */
export const paidByCard = (receipt: Receipt): boolean => receipt.onramp?.state === 'processing' || receipt.onramp?.state === 'delivered';

/**
 * The merchant asks to refund a paid receipt, all that is left or `amountUsd` of it. Answers what to
 * send: the token that paid, from the merchant's wallet to the payer, with an EIP-681 URI a wallet
 * can pay; the receipt becomes `refund_requested` with the refund recorded. One open refund at a time.
 */
export const requestRefund = async (deps: RequestDeps, wallet: string, request: RefundRequest) => {
  const stored = await deps.receipts.get(wallet, request.id);
  if (!stored) throw new DomainError('not_found', `receipt ${request.id} not found`);
  const receipt = stored.value;
  if (openRefund(receipt)) throw new DomainError('conflict', 'this receipt has a refund waiting for its transaction: send it and report its hash first');
  if (!REFUNDABLE.includes(receipt.status)) throw new DomainError('receipt_not_payable', `a ${receipt.status} receipt cannot be refunded`);
  if (paidByCard(receipt)) {
    const provider = receipt.onramp!.provider;
    throw new DomainError('refund_through_provider', `this receipt was paid by card through ${provider}: its USDC came from the provider's wallet, not the buyer's, so refund it in the provider's dashboard`, { provider });
  }
  const left = refundableCents(receipt);
  if (left <= 0) throw new DomainError('receipt_not_payable', 'this receipt is refunded in full');
  const cents = request.amountUsd === undefined ? left : toCents(request.amountUsd);
  if (cents > left) {
    throw new DomainError('refund_too_large', `at most ${left / 100} USD is left to refund`, { field: 'amountUsd', refundableUsd: left / 100 });
  }
  const quote = paidQuote(receipt);
  const payer = receipt.buyerWallet;
  if (!quote || !payer) throw new DomainError('receipt_not_payable', 'this receipt has no payment on chain to refund');
  const units = refundUnits(receipt, quote, cents);
  if (units <= 0n) throw new DomainError('invalid_input', 'amountUsd: too small to send in the token that paid', { field: 'amountUsd' });

  const tokenAddress = quote.tokenAddress === null ? null : lower(quote.tokenAddress);
  const refund: Refund = {
    refundId: `rf_${deps.ids.random(10)}`,
    requestedAt: deps.clock.now(),
    amountUsd: cents / 100,
    token: quote.token,
    tokenAddress,
    amount: units.toString(),
    from: lower(receipt.wallet),
    to: lower(payer),
    uri: paymentUri({ chainId: quote.chainId, payTo: lower(payer), tokenAddress, amount: units.toString() }),
    reason: request.reason ?? null,
    txHash: null,
    refundedAt: null,
  };
  const outcome = await changeStatus(deps, {
    wallet,
    receiptId: receipt.receiptId,
    status: 'refund_requested',
    actor: 'service',
    facts: (current) => ({ refunds: [...(current.refunds ?? []), refund] }),
  });
  // Another request (or a verification) changed the receipt first: this one is not applied.
  if (outcome.ignored) throw new DomainError('conflict', `the receipt changed meanwhile (${outcome.reason}); try again`);
  return { ok: true as const, receiptId: receipt.receiptId, status: outcome.receipt.status, refund };
};

/** Claims the hash for this receipt; a hash another receipt's refund used is refused. */
const claimRefundHash = async (deps: RefundVerifyDeps, chainId: number, receiptId: string, hash: string) => {
  // The same receipt again is fine: an earlier verification stopped between the claim and the status.
  if (!(await holdClaim(deps.claims, { id: refundTxClaimId(chainId, hash), owner: receiptId, createdAt: deps.clock.now() }))) {
    throw new DomainError('transaction_already_used', `transaction ${hash} already refunded another receipt`, { field: 'txHash' });
  }
};

const notARefund = (reason: string) => new DomainError('not_a_payment', reason, { field: 'txHash' });

/**
 * Verifies a transaction as the receipt's open refund: mined with enough confirmations, succeeded,
 * moved the refund's token (ETH: the transaction's value) from the merchant's wallet to the payer,
 * at least the amount, no earlier than the refund was requested; its hash used by no other refund.
 * Then the receipt is `refunded` with the refund's hash and time. A partial refund leaves the rest
 * refundable (the receipt view's `refundedUsd` counts verified refunds).
 */
export const verifyRefund = async (deps: RefundVerifyDeps, wallet: string, receiptId: string, txHash: string) => {
  const chain = deps.chain;
  if (!chain) throw new DependencyUnavailableError('chain', 'payments are not configured on this deployment');
  const hash = lower(txHash);
  const stored = await deps.receipts.get(wallet, receiptId);
  if (!stored) throw new DomainError('not_found', `receipt ${receiptId} not found`);
  const receipt = stored.value;
  const answer = (outcome: RefundOutcome, status = receipt.status) => ({ ok: true as const, receiptId, status, outcome });
  const refund = openRefund(receipt);
  if ((receipt.refunds ?? []).some((known) => known.txHash === hash)) {
    // Reported again: the same answer; but it cannot pay a later refund of the receipt as well.
    if (!refund) return answer('refunded');
    throw new DomainError('transaction_already_used', `transaction ${hash} already refunded an earlier refund of this receipt`, { field: 'txHash' });
  }
  if (!refund) throw new DomainError('conflict', 'this receipt has no refund waiting for a transaction');

  const tx = await chain.transaction(hash);
  if (tx === undefined) throw new DomainError('transaction_not_found', `transaction ${hash} is not on chain ${chain.chainId}`, { field: 'txHash' });
  if (tx === 'pending') return answer('pending');
  const head = await chain.blockNumber();
  if (head - tx.blockNumber + 1 < deps.settings.payments.confirmations) return answer('unconfirmed');

  if (tx.status !== 1) throw notARefund('the transaction reverted');
  const token = lower(refund.tokenAddress ?? ZERO_ADDRESS);
  const moved = tx.moves
    .filter((move) => lower(move.token) === token && lower(move.from) === refund.from && lower(move.to) === refund.to)
    .reduce((sum, move) => sum + BigInt(move.amount), 0n);
  if (moved === 0n) throw notARefund(`the transaction moved no ${refund.token} from ${refund.from} to ${refund.to}`);
  if (moved < BigInt(refund.amount)) throw notARefund(`the transaction moved ${moved} of the ${refund.amount} the refund needs`);
  if (minedBefore(tx.blockTimestamp, refund.requestedAt)) throw notARefund('the transaction was mined before the refund was requested');

  await claimRefundHash(deps, chain.chainId, receiptId, hash);
  const now = deps.clock.now();
  const outcome = await changeStatus(deps, {
    wallet,
    receiptId,
    status: 'refunded',
    actor: 'service',
    facts: (current) => ({
      refunds: (current.refunds ?? []).map((known) => (known.refundId === refund.refundId ? { ...known, txHash: hash, refundedAt: now } : known)),
    }),
  });
  if (outcome.ignored) {
    // Verified meanwhile (the watcher and a report at once): fine when it was this transaction.
    if ((outcome.receipt.refunds ?? []).some((known) => known.txHash === hash)) return answer('refunded', outcome.receipt.status);
    throw new DomainError('conflict', `the receipt changed meanwhile (${outcome.reason}); try again`);
  }
  return answer('refunded', outcome.receipt.status);
};

/** Receipts with an open refund looked at per block range, and of one merchant (its newest). */
const REFUNDS_PER_RANGE = 200;
const REFUNDS_PER_MERCHANT = 20;

/**
 * The receipts whose open refunds this range watches: a walk over merchants in wallet order, up to
 * REFUNDS_PER_MERCHANT of each (its newest requests) and REFUNDS_PER_RANGE in all, from where the
 * last range's walk stopped (a cursor in the chain state), round to the start again. So one merchant's
 * many stale requests cost it its own later ones only, and every merchant comes round in turn.
 */
const refundsInTurn = async (deps: RefundVerifyDeps, chainId: number): Promise<Receipt[]> => {
  const key = refundCursorId(chainId);
  const stored = await deps.chainState.get(key, key);
  const start = stored?.value.refundsAfter ?? '';
  const taken: Receipt[] = [];
  let after = start;
  let wrapped = start === '';
  // Where the next range starts: where this walk stopped for room, or the start when it went round.
  let next = '';
  for (;;) {
    const page = await deps.receipts.inStatusesByWallet(['refund_requested'], { afterWallet: after, limit: REFUNDS_PER_MERCHANT });
    if (page.length === 0) {
      if (wrapped) break;
      wrapped = true;
      after = '';
      continue;
    }
    // A full page may end in a merchant cut short: it leads the next page instead, with its full share.
    const cut = page.length === REFUNDS_PER_MERCHANT && page[0]!.wallet !== page.at(-1)!.wallet ? page.at(-1)!.wallet : undefined;
    let rows = cut === undefined ? page : page.filter((receipt) => receipt.wallet !== cut);
    // Round again, the walk ends at the merchant it began after (that one included).
    const home = wrapped && start !== '' && rows.some((receipt) => receipt.wallet > start);
    if (home) rows = rows.filter((receipt) => receipt.wallet <= start);
    // Whole merchants only: the first that does not fit leads the next range.
    const room = REFUNDS_PER_RANGE - taken.length;
    const fitting = rows.length <= room ? rows : rows.filter((receipt) => receipt.wallet < rows[room]!.wallet);
    taken.push(...fitting);
    if (fitting.length < rows.length) {
      next = fitting.at(-1)?.wallet ?? after;
      break;
    }
    if (home || rows.length === 0) break;
    after = rows.at(-1)!.wallet;
  }
  if (next !== start) await deps.chainState.upsert(key, { id: key, refundsAfter: next, updatedAt: deps.clock.now() });
  return taken;
};

/**
 * For the payment watcher, with each block range it scans: token refunds sent without a reported
 * hash are found by their `Transfer` from the merchant's wallet to the payer, and verified by
 * `verifyRefund` (the same use case as a reported hash). The chain is asked once per range, for the
 * transfers among all the senders and payers of the refunds in turn (`refundsInTurn`), and each
 * refund is matched to its own pair in memory. A refund out of turn for a range is not looked for in
 * it: its merchant reports the hash. ETH refunds are found only by a reported hash: a plain ETH
 * transfer leaves no log to search for.
 */
export const watchRefunds = async (deps: RefundVerifyDeps, range: { fromBlock: number; toBlock: number }): Promise<{ refunded: string[] }> => {
  const refunded: string[] = [];
  const chain = deps.chain;
  if (!chain) return { refunded };
  const open = (await refundsInTurn(deps, chain.chainId)).flatMap((receipt) => {
    const refund = openRefund(receipt);
    return refund && refund.tokenAddress !== null ? [{ receipt, refund, token: refund.tokenAddress }] : [];
  });
  if (open.length === 0) return { refunded };
  const unique = (addresses: string[]) => [...new Set(addresses)];
  const moves = await chain.transfersAmong(unique(open.map(({ refund }) => refund.from)), unique(open.map(({ refund }) => refund.to)), range);
  for (const { receipt, refund, token } of open) {
    const own = moves.filter((move) => lower(move.token) === token && lower(move.from) === refund.from && lower(move.to) === refund.to);
    for (const hash of new Set(own.map((move) => lower(move.txHash)))) {
      try {
        const result = await verifyRefund(deps, receipt.wallet, receipt.receiptId, hash);
        if (result.outcome === 'refunded') {
          refunded.push(receipt.receiptId);
          break;
        }
      } catch (error) {
        // Not this refund (too little, too early, another receipt's): try the next; anything else stops the range.
        if (!(error instanceof DomainError)) throw error;
      }
    }
  }
  return { refunded };
};
