/**
 * The payment watcher (a timer): reads transfers into the open deposit addresses, from a stored block
 * cursor and behind the confirmation depth; an address names its receipt. Token transfers are found
 * by their logs; ETH, which a plain transaction or a contract wallet sends without one, by the
 * address's balance rising over the range, and then the range's transactions to it. A phone wallet
 * that paid from the QR code, with no page open, is found here; verification is the same use case as
 * a reported hash.
 */
import { cursorId, ZERO_ADDRESS, type DepositWatch } from '../../domain/payment';
import { RangeTooLargeError, type ChainMove } from '../../ports/chain';
import { DomainError } from '../../domain/errors';
import { openDeposits } from './deposits';
import { commitPendingStock } from './stock';
import { creditBalanceRise, verifyPayment, type VerifyDeps } from './verify';

export type WatchDeps = VerifyDeps;

/** Ranges one run scans at most (a watcher far behind catches up over several runs). */
const MAX_RANGES_PER_RUN = 5;
/** Ranges read in a row at one width before it is doubled again (toward the setting) after a refusal narrowed it. */
const WIDEN_AFTER = 4;
/**
 * The widest range the node lately took, narrowed when it refused a log query for its size and widened
 * again after ranges it took (the watcher runs on one instance at a time): a capped provider is not
 * asked the refused width again on every run.
 */
const rangeWidth = { blocks: Number.POSITIVE_INFINITY, taken: 0 };
/** How often a run also sweeps paid receipts whose stock commit was cut short. */
const STOCK_SWEEP_EVERY_MS = 60_000;
let lastStockSweep = 0;
/** Refusals that are the answer for good: the transfer is not (or no longer) this receipt's payment. */
// (Not `transaction_not_found`: the watcher has just read the transfer's log, so a node that does not
// know the transaction yet is behind, and the next run asks again.)
const FINAL_REFUSALS = new Set(['not_a_payment', 'transaction_already_used', 'not_found']);

/**
 * A range's read refused for its size: narrower from now on, so the same blocks are read again, half
 * as many at a time, in this run. Any other failure, or a single block refused (no question of width),
 * stops the run.
 */
const narrowAfter = (error: unknown, range: { fromBlock: number; toBlock: number }) => {
  if (!(error instanceof RangeTooLargeError) || range.toBlock === range.fromBlock) throw error;
  rangeWidth.blocks = Math.max(1, Math.floor((range.toBlock - range.fromBlock + 1) / 2));
  rangeWidth.taken = 0;
};

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

/** The ETH balance of each watched address at the end of the last range this process read (the watcher runs on one instance at a time). */
const lastEthBalances = new Map<string, { block: number; balance: bigint }>();

/**
 * ETH that reached the watched addresses in the range: where an address's balance rose from the
 * block before the range to its end, the range's transactions to it, and what of the rise they do not
 * explain (ETH a contract wallet sent on, with no transaction of its own to the address): the balance
 * is the truth, so that part is credited to the receipt at the range's end, its sender unknown.
 */
const ethArrivals = async (deps: WatchDeps, open: Map<string, DepositWatch>, range: { fromBlock: number; toBlock: number }) => {
  const chain = deps.chain!;
  const watched = [...open].filter(([, entry]) => entry.eth).map(([address]) => address);
  if (watched.length === 0) return { moves: [], unexplained: [] };
  // The balance before the range is the one this process read at the end of the previous range, where
  // it has it: one read per address and range in the steady state, not two.
  const start = Math.max(0, range.fromBlock - 1);
  const unknown = watched.filter((address) => lastEthBalances.get(address)?.block !== start);
  const [before, after] = await Promise.all([unknown.length > 0 ? chain.balancesOf(unknown, [ZERO_ADDRESS], start) : ({} as Record<string, Record<string, bigint>>), chain.balancesOf(watched, [ZERO_ADDRESS], range.toBlock)]);
  const rises = new Map<string, bigint>();
  for (const address of [...lastEthBalances.keys()]) if (!open.has(address)) lastEthBalances.delete(address);
  for (const address of watched) {
    const had = before[address]?.[ZERO_ADDRESS] ?? lastEthBalances.get(address)?.balance ?? 0n;
    const has = after[address]?.[ZERO_ADDRESS] ?? 0n;
    lastEthBalances.set(address, { block: range.toBlock, balance: has });
    if (has > had) rises.set(address, has - had);
  }
  if (rises.size === 0) return { moves: [], unexplained: [] };
  const moves = await chain.ethTransfersTo([...rises.keys()], range);
  for (const move of moves) {
    const address = move.to.toLowerCase();
    rises.set(address, (rises.get(address) ?? 0n) - BigInt(move.amount));
  }
  const suspects = [...rises].filter(([, rest]) => rest > 0n).map(([address]) => address);
  return { moves, unexplained: suspects.length > 0 ? await perBlockCredits(deps, suspects, moves, range) : [] };
};

/**
 * The unexplained part of a rise, block by block (a credit is named by its address and block, so a
 * range read again, or cut otherwise, credits the same ETH once): each block's rise less the
 * transactions to the address in it. Read only for addresses whose rise over the range was not
 * explained, a rare case. A sweep in the same block takes ETH out, so a rise can only understate what
 * came in: never a credit of ETH that did not.
 */
const perBlockCredits = async (deps: WatchDeps, addresses: string[], moves: ChainMove[], range: { fromBlock: number; toBlock: number }) => {
  const chain = deps.chain!;
  const blocks = Array.from({ length: range.toBlock - range.fromBlock + 2 }, (_, index) => range.fromBlock - 1 + index).filter((block) => block >= 0);
  const balances = await Promise.all(blocks.map((block) => chain.balancesOf(addresses, [ZERO_ADDRESS], block)));
  const credits: Array<{ address: string; amount: bigint; blockNumber: number }> = [];
  for (let at = 1; at < blocks.length; at++) {
    const block = blocks[at]!;
    for (const address of addresses) {
      const rise = (balances[at]![address]?.[ZERO_ADDRESS] ?? 0n) - (balances[at - 1]![address]?.[ZERO_ADDRESS] ?? 0n);
      const explained = moves.filter((move) => move.blockNumber === block && move.to.toLowerCase() === address).reduce((sum, move) => sum + BigInt(move.amount), 0n);
      if (rise - explained > 0n) credits.push({ address, amount: rise - explained, blockNumber: block });
    }
  }
  return credits;
};

/**
 * One run: up to a few bounded ranges from the cursor to the newest block with enough confirmations.
 * Each transaction into an open address is verified once for that address's receipt; a failure to
 * verify one stops the run before the cursor passes it, so it is tried again.
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

  for (let run = 0; run < MAX_RANGES_PER_RUN && next <= safe; ) {
    const width = Math.max(1, Math.min(watchBlockRange, rangeWidth.blocks));
    const range = { fromBlock: next, toBlock: Math.min(safe, next + width - 1) };
    const now = deps.clock.now();
    const open = await openDeposits(deps);
    const addresses = [...open.keys()];
    let tokenMoves: ChainMove[];
    let eth: Awaited<ReturnType<typeof ethArrivals>>;
    try {
      [tokenMoves, eth] = addresses.length > 0 ? await Promise.all([chain.paymentsInto(addresses, range), ethArrivals(deps, open, range)]) : [[], { moves: [], unexplained: [] }];
    } catch (error) {
      narrowAfter(error, range);
      continue;
    }
    report.fromBlock ??= range.fromBlock;
    report.toBlock = range.toBlock;
    const ethIn: ChainMove[] = eth.moves;
    // One verification per transaction and receipt: a transaction paying two addresses pays two receipts.
    const seen = new Set<string>();
    for (const move of [...tokenMoves, ...ethIn].sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex)) {
      const owner = ownerOf(open.get(move.to.toLowerCase())?.owner ?? '');
      const key = `${move.txHash}:${move.to.toLowerCase()}`;
      if (!owner || seen.has(key)) continue;
      seen.add(key);
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
        report.unmatched++;
      }
    }
    for (const credit of eth.unexplained) {
      const owner = ownerOf(open.get(credit.address)?.owner ?? '');
      if (!owner) continue;
      try {
        await creditBalanceRise(deps, owner.receiptId, { ...credit, blockTimestamp: await chain.blockTimestamp(credit.blockNumber) });
        report.matched++;
      } catch (error) {
        if (!(error instanceof DomainError) || !FINAL_REFUSALS.has(error.code)) throw error;
        report.unmatched++;
      }
    }
    try {
      for (const listener of listeners) await listener(deps, range);
    } catch (error) {
      // The range's payments are decided (read again, each is found recorded): its refunds are not yet.
      narrowAfter(error, range);
      continue;
    }
    next = range.toBlock + 1;
    const state = { id: cursorKey, nextBlock: next, updatedAt: now };
    // One watcher runs at a time (the timer is a singleton); a clash means another run got further.
    etag = etag ? await deps.chainState.replace(cursorKey, state, etag) : await deps.chainState.create(cursorKey, state);
    run++;
    if (rangeWidth.blocks < watchBlockRange && ++rangeWidth.taken >= WIDEN_AFTER) {
      rangeWidth.blocks = Math.min(watchBlockRange, rangeWidth.blocks * 2);
      rangeWidth.taken = 0;
    }
  }
  if (deps.clock.now() - lastStockSweep > STOCK_SWEEP_EVERY_MS) {
    lastStockSweep = deps.clock.now();
    await commitPendingStock(deps);
  }
  return report;
};
