/**
 * The payment watcher (a timer): reads transfers into the splits that have open quotes, from a
 * stored block cursor and behind the confirmation depth, and matches each to its receipt by exact
 * amount (quote amounts are unique per split and token). A phone wallet that paid from the QR code,
 * with no page open, is found here; verification is the same use case as a reported hash.
 */
import { cursorId, quoteAmountClaimId, watchlistId } from '../../domain/payment';
import type { ChainMove } from '../../ports/chain';
import { DomainError } from '../../domain/errors';
import { commitPendingStock } from './stock';
import { verifyPayment, type VerifyDeps } from './verify';

export type WatchDeps = VerifyDeps;

/** Ranges one run scans at most (a watcher far behind catches up over several runs). */
const MAX_RANGES_PER_RUN = 5;
/** How often a run also sweeps paid receipts whose stock commit was cut short. */
const STOCK_SWEEP_EVERY_MS = 60_000;
let lastStockSweep = 0;
/** Refusals that are the answer for good: the transfer is not (or no longer) this receipt's payment. */
// (Not `transaction_not_found`: the watcher has just read the transfer's log, so a node that does not
// know the transaction yet is behind, and the next run asks again.)
const FINAL_REFUSALS = new Set(['not_a_payment', 'transaction_already_used', 'not_found']);

export interface WatchReport {
  fromBlock: number | null;
  toBlock: number | null;
  matched: number;
  unmatched: number;
}

/** Other work that reads the same block ranges (refunds sent by merchants), run after payments. */
export type RangeListener = (deps: WatchDeps, range: { fromBlock: number; toBlock: number }) => Promise<unknown>;

const ownerOf = (owner: string) => {
  const at = owner.indexOf(':');
  return at < 0 ? undefined : { wallet: owner.slice(0, at), receiptId: owner.slice(at + 1) };
};

/** The receipt a transfer pays, by the claim on its exact amount. */
const receiptFor = async (deps: WatchDeps, chainId: number, move: ChainMove) => {
  const id = quoteAmountClaimId(chainId, move.to, move.token, move.amount);
  const claim = await deps.claims.get(id, id);
  return claim ? ownerOf(claim.value.owner) : undefined;
};

/**
 * One run: up to a few bounded ranges from the cursor to the newest block with enough confirmations.
 * A transfer that matches no open quote is left alone (the merchant sees it in the split's
 * transactions); a failure to verify one stops the run before the cursor passes it, so it is tried again.
 */
export const watchPayments = async (deps: WatchDeps, listeners: RangeListener[] = []): Promise<WatchReport> => {
  const report: WatchReport = { fromBlock: null, toBlock: null, matched: 0, unmatched: 0 };
  const chain = deps.chain;
  if (!chain) return report;
  const { confirmations, watchBlockRange } = deps.settings.payments;
  const head = await chain.blockNumber();
  const safe = head - confirmations + 1;
  const cursorKey = cursorId(chain.chainId);
  const cursor = await deps.chainState.get(cursorKey, cursorKey);
  let next = cursor?.value.nextBlock ?? Math.max(0, safe - watchBlockRange + 1);
  let etag = cursor?.etag;

  for (let run = 0; run < MAX_RANGES_PER_RUN && next <= safe; run++) {
    const range = { fromBlock: next, toBlock: Math.min(safe, next + watchBlockRange - 1) };
    report.fromBlock ??= range.fromBlock;
    report.toBlock = range.toBlock;
    const listId = watchlistId(chain.chainId);
    const now = deps.clock.now();
    const watched = Object.entries((await deps.chainState.get(listId, listId))?.value.splits ?? {})
      .filter(([, until]) => until > now)
      .map(([split]) => split);
    const moves = watched.length > 0 ? await chain.paymentsInto(watched, range) : [];
    for (const move of moves) {
      const owner = await receiptFor(deps, chain.chainId, move);
      if (!owner) {
        report.unmatched++;
        continue;
      }
      try {
        const answer = await verifyPayment(deps, owner.receiptId, move.txHash);
        // Read from a confirmed block, yet not confirmed by the node asked: decided on a later run.
        if (answer.outcome === 'pending' || answer.outcome === 'unconfirmed') throw new Error(`transaction ${move.txHash} is not confirmed yet at the node`);
        report.matched++;
      } catch (error) {
        // Decided and refused (another receipt's hash, not a payment): nothing more to do with it.
        // Anything else (the chain or the store unavailable, a receipt that kept changing) stops the
        // run before the cursor passes this transfer, so the next run tries it again.
        if (!(error instanceof DomainError) || !FINAL_REFUSALS.has(error.code)) throw error;
      }
    }
    for (const listener of listeners) await listener(deps, range);
    next = range.toBlock + 1;
    const state = { id: cursorKey, nextBlock: next, updatedAt: now };
    // One watcher runs at a time (the timer is a singleton); a clash means another run got further.
    etag = etag ? await deps.chainState.replace(cursorKey, state, etag) : await deps.chainState.create(cursorKey, state);
  }
  if (deps.clock.now() - lastStockSweep > STOCK_SWEEP_EVERY_MS) {
    lastStockSweep = deps.clock.now();
    await commitPendingStock(deps);
  }
  return report;
};
