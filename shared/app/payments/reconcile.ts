/**
 * Reconciliation: the money of paid receipts sits in the merchant's split until someone calls its
 * `distribute(token)`. The relayer does, per split and token holding paid receipts; once that
 * distribution has its confirmations, every receipt whose money reached the split before its block is
 * `reconciled` with the distribution's hash. A receipt paid at its deposit address has its money there
 * until the address is swept into the split: the relayer sweeps first (`sweeps.ts`), and only a
 * distribution after the sweep reconciles it.
 */
import { DomainError } from '../../domain/errors';
import { ZERO_ADDRESS } from '../../domain/payment';
import { formatUnits } from '../../domain/units';
import type { Receipt } from '../../domain/receipt';
import type { Chain, SplitTransfer } from '../../ports/chain';
import type { Claim } from '../../ports/documents';
import type { AppDeps } from '../deps';
import { changeStatus } from '../receipt-status';
import { takeRelayerUnit } from '../relayer-budget';
import { isRecoverable, recentSweepFailures, sweepForReconcile, type PendingSweep } from './sweeps';

type ReconcileDeps = Pick<AppDeps, 'receipts' | 'merchants' | 'queue' | 'clock' | 'settings' | 'claims' | 'chain'>;

/**
 * The relayer's last distribution of a token from a split, kept in `claims` (one per split and token)
 * until it has its confirmations, so a later run finishes it instead of sending another. `empty`: it
 * moved nothing (the split held nothing to distribute); kept so that no further call is sent for the
 * receipts paid before it.
 */
export interface DistributionRecord extends Claim {
  txHash: string;
  blockNumber: number;
  empty: boolean;
}

export const distributionRecordId = (chainId: number, split: string, token: string) => `split-distribution:${chainId}:${split.toLowerCase()}:${token.toLowerCase()}`;

/** Paid receipts looked at per run, oldest first. */
const RECEIPTS_PER_RUN = 500;
/** How far back (in `watchBlockRange` chunks) a run looks for distributions someone else made. */
const SCAN_CHUNKS = 20;
const RECORD_TTL_MS = 30 * 24 * 3_600_000;

export interface ReconcileReport {
  reconciled: Array<{ receiptId: string; txHash: string }>;
  /** Receipts whose distribution is waiting for its confirmations. */
  waiting: string[];
  /** Receipts left paid this run, with why. */
  skipped: Array<{ receiptId: string; reason: string }>;
}

interface PaidEntry {
  receipt: Receipt;
  split: string;
  token: string;
  /** The block of the transaction that paid it. */
  paidBlock: number;
  /** The receipt's deposit address (lower-case), when it was paid there: its money reaches the split only when swept. */
  deposit?: string;
  /**
   * The block from which its money is in the split: the payment's; for a deposit, its sweep's (or, for
   * a sweep older than the blocks looked through, the block before them). Only a distribution after it
   * can have paid the money out.
   */
  inSplit: number;
}

const lower = (text: string) => text.toLowerCase();

/**
 * Where the receipt's money went: the split and token of the paying quote, and the block of the
 * payment. A quote to the receipt's deposit address sends it to the deposit's split; an older quote
 * (or an x402 settlement) named the split itself.
 */
const entryOf = (receipt: Receipt): PaidEntry | string => {
  const records = (receipt.payments ?? []).filter((record) => record.outcome === 'paid' || record.outcome === 'overpaid');
  const record = records.find((candidate) => candidate.txHash === receipt.transactionHash) ?? records[0];
  if (!record) return 'no paying transaction is recorded';
  const quote = [...(receipt.quotes ?? [])].reverse().find((candidate) => candidate.token === record.token);
  if (!quote) return `no ${record.token ?? 'token'} quote names the split it was paid into`;
  const token = lower(quote.tokenAddress ?? ZERO_ADDRESS);
  const deposit = receipt.deposit && lower(receipt.deposit.address) === lower(quote.payTo) ? receipt.deposit : undefined;
  if (deposit) return { receipt, split: lower(deposit.split), token, paidBlock: record.blockNumber, deposit: lower(deposit.address), inSplit: record.blockNumber };
  return { receipt, split: lower(quote.payTo), token, paidBlock: record.blockNumber, inSplit: record.blockNumber };
};

/**
 * The split's transfers (payments in, distributions out) from `fromBlock` to `toBlock`, oldest first,
 * in bounded ranges: at most the last `SCAN_CHUNKS` of them, from `from`.
 */
const splitTransfersIn = async (deps: ReconcileDeps, chain: Chain, split: string, fromBlock: number, toBlock: number): Promise<{ from: number; transfers: SplitTransfer[] }> => {
  const step = Math.max(1, deps.settings.payments.watchBlockRange);
  const start = Math.max(fromBlock, toBlock - SCAN_CHUNKS * step + 1, 0);
  const transfers: SplitTransfer[] = [];
  for (let from = start; from <= toBlock; from += step) transfers.push(...(await chain.splitTransfers(split, { fromBlock: from, toBlock: Math.min(toBlock, from + step - 1) })));
  return { from: start, transfers };
};

/** Distributions of the token out of the split from `fromBlock` to `toBlock`, oldest first, in bounded ranges. */
const distributionsOf = async (deps: ReconcileDeps, chain: Chain, split: string, token: string, fromBlock: number, toBlock: number): Promise<SplitTransfer[]> =>
  (await splitTransfersIn(deps, chain, split, fromBlock, toBlock)).transfers.filter((transfer) => transfer.kind === 'distribution' && lower(transfer.token) === token);

/**
 * The timer's work. First the receipts paid at deposit addresses (`intoSplits`): those whose address
 * still holds the paid token are swept by the relayer, the rest are dated by their sweep. Then paid
 * receipts whose money is in the split are grouped by split and token; for each group (a receipt's
 * "payment" below is when its money reached the split: a deposit's sweep):
 * 1. the relayer's earlier distribution, if one is kept: with its confirmations, the receipts paid
 *    before its block are reconciled with its hash (without them, the group waits for the next run);
 * 2. a distribution someone else made after a receipt's payment (anyone may call `distribute`)
 *    reconciles that receipt with its hash;
 * 3. for the rest, the relayer calls `distribute(token)` and keeps the transaction; with the
 *    confirmations already there (locally, 1) the receipts paid before it are reconciled in the same run.
 *    It does so only once the split holds the token's `distributeMin` (the gas is worth it) and while
 *    the day's distribution budget lasts: until then the receipts stay paid, skipped with the reason.
 * A distribution that moved nothing (the split had nothing left: someone distributed in the payment's
 * own block) is matched to a distribution in or after the payment's block, or the receipts are
 * skipped with the reason, and no further call is sent for them.
 */
export const reconcileSplits = async (deps: ReconcileDeps, options: { log?: (message: string) => void } = {}): Promise<ReconcileReport> => {
  const log = options.log ?? ((message: string) => console.warn(message));
  const report: ReconcileReport = { reconciled: [], waiting: [], skipped: [] };
  const chain = deps.chain;
  if (!chain) return report;

  const entries: PaidEntry[] = [];
  for (const receipt of await deps.receipts.inStatuses(['paid'], { limit: RECEIPTS_PER_RUN })) {
    const entry = entryOf(receipt);
    if (typeof entry === 'string') {
      report.skipped.push({ receiptId: receipt.receiptId, reason: entry });
      log(`splits-reconcile: receipt ${receipt.receiptId} skipped: ${entry}`);
      continue;
    }
    entries.push(entry);
  }
  const skip = (skipped: PaidEntry[], reason: string) => {
    if (skipped.length === 0) return;
    report.skipped.push(...skipped.map((entry) => ({ receiptId: entry.receipt.receiptId, reason })));
    const { split, token } = skipped[0]!;
    log(`splits-reconcile: split ${split} token ${token}: ${skipped.map((entry) => entry.receipt.receiptId).join(', ')} left paid: ${reason}`);
  };

  const groups = new Map<string, PaidEntry[]>();
  for (const entry of await intoSplits(deps, chain, entries, skip)) {
    const key = `${entry.split}:${entry.token}`;
    groups.set(key, [...(groups.get(key) ?? []), entry]);
  }

  for (const entries of groups.values()) {
    const { split, token } = entries[0]!;
    try {
      await reconcileGroup(deps, chain, split, token, entries, report, log);
    } catch (error) {
      // One split's failure (the relayer out of gas, a revert) does not hold up the others; an unreachable chain or store does.
      if (error instanceof DomainError || !isRecoverable(error)) throw error;
      for (const entry of entries) report.skipped.push({ receiptId: entry.receipt.receiptId, reason: `distribution failed: ${(error as Error).message}` });
      log(`splits-reconcile: split ${split} token ${token}: distribution failed: ${(error as Error).message}`);
    }
  }
  return report;
};

/**
 * The least of `token` a split must hold for the relayer to distribute it, with how to name it;
 * undefined for a token the deployment no longer configures (distributed whatever it holds, as before).
 */
const distributeMinimum = (settings: ReconcileDeps['settings'], token: string) => {
  const known = settings.tokens.find((candidate) => lower(candidate.address) === token);
  if (!known) return undefined;
  const setting = known.symbol === 'ETH' ? 'DISTRIBUTE_MIN_ETH_WEI' : `DISTRIBUTE_MIN_${known.symbol}`;
  return { units: settings.relayer.distributeMin[known.symbol], symbol: known.symbol, decimals: known.decimals, setting };
};

const byKey = <T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> => {
  const grouped = new Map<string, T[]>();
  for (const item of items) grouped.set(key(item), [...(grouped.get(key(item)) ?? []), item]);
  return grouped;
};

/**
 * The entries whose money is in their split, each with the block it arrived in (`inSplit`); the rest
 * skipped with the reason. A direct payment is there already. A deposit is read (one `balancesOf` for
 * them all, at one block): one that no longer holds the paid token was swept, by anyone, and is dated by
 * the last transfer from it into the split since the payment (one older than the blocks looked through
 * is dated before them); one that still holds it is swept now by the relayer with every token read
 * there (`sweepForReconcile`: batched, on the sweep budget), once its split and the deposits waiting
 * for it together reach the token's `distributeMin`, unless its last sweep failed within a day. Only
 * this deployment's factory's addresses are swept.
 */
const intoSplits = async (deps: ReconcileDeps, chain: Chain, entries: PaidEntry[], skip: (skipped: PaidEntry[], reason: string) => void): Promise<PaidEntry[]> => {
  const ready = entries.filter((entry) => !entry.deposit);
  const atDeposits: PaidEntry[] = [];
  for (const entry of entries.filter((candidate) => candidate.deposit)) {
    const expected = await chain.depositAddress(entry.split, entry.receipt.wallet, entry.receipt.receiptId);
    if (expected !== undefined && lower(expected) === entry.deposit) atDeposits.push(entry);
    else skip([entry], `its deposit address ${entry.deposit} is not one of the configured DepositFactory's (DEPOSIT_FACTORY_ADDRESS): the relayer does not sweep it`);
  }
  if (atDeposits.length === 0) return ready;

  const head = await chain.blockNumber();
  const tokens = [...new Set(atDeposits.map((entry) => entry.token))];
  const balances = await chain.balancesOf([...new Set(atDeposits.map((entry) => entry.deposit!))], tokens, head);
  const held = (address: string, token: string) => balances[address]?.[token] ?? 0n;

  // Swept already: dated by the sweep.
  for (const [split, swept] of byKey(
    atDeposits.filter((entry) => held(entry.deposit!, entry.token) === 0n),
    (entry) => entry.split,
  )) {
    const { from, transfers } = await splitTransfersIn(deps, chain, split, Math.min(...swept.map((entry) => entry.paidBlock)), head);
    for (const entry of swept) {
      const sweep = transfers.filter(
        (transfer) => transfer.kind === 'payment' && lower(transfer.from) === entry.deposit && lower(transfer.token) === entry.token && transfer.blockNumber >= entry.paidBlock,
      ).at(-1);
      if (sweep) ready.push({ ...entry, inSplit: sweep.blockNumber });
      else if (entry.paidBlock < from) ready.push({ ...entry, inSplit: from - 1 });
      else skip([entry], `its deposit address ${entry.deposit} holds none of the token and no sweep from it into the split was found after the payment`);
    }
  }

  // Still at the deposit: swept now, where the day's budget, the token's threshold and earlier failures allow.
  let unswept = atDeposits.filter((entry) => held(entry.deposit!, entry.token) > 0n);
  const failures = await recentSweepFailures(deps, chain, unswept.map((entry) => entry.deposit!));
  for (const entry of unswept.filter((candidate) => failures.has(candidate.deposit!))) {
    skip([entry], `the relayer's last sweep of its deposit address ${entry.deposit} failed (SweepFailed): tried again after ${new Date(failures.get(entry.deposit!)!).toISOString()}`);
  }
  unswept = unswept.filter((entry) => !failures.has(entry.deposit!));
  const toSweep: PaidEntry[] = [];
  for (const group of byKey(unswept, (entry) => `${entry.split}:${entry.token}`).values()) {
    const { split, token } = group[0]!;
    const minimum = distributeMinimum(deps.settings, token);
    if (minimum && minimum.units > 0n) {
      let inSplit: bigint;
      try {
        inSplit = (await chain.splitHoldings(split, split, [token]))[token]?.distributable ?? 0n;
      } catch (error) {
        if (!isRecoverable(error)) throw error;
        skip(group, `the split's balance could not be read: ${(error as Error).message}`);
        continue;
      }
      const waiting = [...new Set(group.map((entry) => entry.deposit!))].reduce((sum, address) => sum + held(address, token), 0n);
      if (inSplit + waiting < minimum.units) {
        const amount = (units: bigint) => `${formatUnits(units, minimum.decimals)} ${minimum.symbol}`;
        skip(group, `the split holds ${amount(inSplit)} and its deposit addresses ${amount(waiting)}, below the ${amount(minimum.units)} the relayer distributes from (${minimum.setting}): their sweep and distribution wait`);
        continue;
      }
    }
    toSweep.push(...group);
  }
  if (toSweep.length === 0) return ready;

  const pending = new Map<string, PendingSweep>();
  for (const entry of toSweep) {
    const address = entry.deposit!;
    if (pending.has(address)) continue;
    const sweep = { split: entry.split, wallet: entry.receipt.wallet, receiptId: entry.receipt.receiptId, tokens: tokens.filter((token) => held(address, token) > 0n) };
    pending.set(address, { address, sweep });
  }
  const outcomes = await sweepForReconcile(deps, chain, [...pending.values()]);
  for (const entry of toSweep) {
    const outcome = outcomes.get(entry.deposit!);
    if (outcome?.swept) ready.push({ ...entry, inSplit: outcome.blockNumber });
    else skip([entry], outcome?.reason ?? 'not swept');
  }
  return ready;
};


const reconcileGroup = async (
  deps: ReconcileDeps,
  chain: Chain,
  split: string,
  token: string,
  entries: PaidEntry[],
  report: ReconcileReport,
  log: (message: string) => void,
) => {
  const required = deps.settings.payments.confirmations;
  let head = await chain.blockNumber();
  const confirmed = (block: number) => head - block + 1 >= required;
  const recordId = distributionRecordId(chain.chainId, split, token);
  let open = [...entries].sort((a, b) => a.inSplit - b.inSplit);

  const settle = async (settled: PaidEntry[], txHash: string) => {
    for (const entry of settled) {
      const outcome = await changeStatus(deps, {
        wallet: entry.receipt.wallet,
        receiptId: entry.receipt.receiptId,
        status: 'reconciled',
        actor: 'service',
        facts: { reconciledTxHash: txHash },
      }).catch((error: unknown) => {
        if (error instanceof DomainError) return undefined;
        throw error;
      });
      if (outcome && !outcome.ignored) report.reconciled.push({ receiptId: entry.receipt.receiptId, txHash });
    }
  };
  const wait = (waiting: PaidEntry[]) => report.waiting.push(...waiting.map((entry) => entry.receipt.receiptId));
  const skip = (skipped: PaidEntry[], reason: string) => {
    if (skipped.length === 0) return;
    report.skipped.push(...skipped.map((entry) => ({ receiptId: entry.receipt.receiptId, reason })));
    log(`splits-reconcile: split ${split} token ${token}: ${skipped.map((entry) => entry.receipt.receiptId).join(', ')} left paid: ${reason}`);
  };
  /** Entries whose money left a split since found empty: each matched to a distribution in or after its payment's block, or skipped. */
  const matchEmptied = async (emptied: PaidEntry[], distributions: SplitTransfer[], reason: string) => {
    const unmatched: PaidEntry[] = [];
    for (const entry of emptied) {
      const match = distributions.find((transfer) => transfer.blockNumber >= entry.inSplit);
      if (!match) unmatched.push(entry);
      else if (confirmed(match.blockNumber)) await settle([entry], match.txHash);
      else wait([entry]);
    }
    skip(unmatched, reason);
  };

  // 1. The relayer's earlier distribution.
  const kept = await deps.claims.get(recordId, recordId);
  const record = kept?.value as DistributionRecord | undefined;
  if (record && !record.empty) {
    const tx = await chain.transaction(record.txHash);
    if (tx === undefined || tx === 'pending') {
      // Reorganized away: as if never sent.
      await deps.claims.delete(recordId, recordId, kept!.etag);
    } else if (!confirmed(tx.blockNumber)) {
      wait(open);
      return;
    } else {
      const before = open.filter((entry) => entry.inSplit < tx.blockNumber);
      await settle(before, record.txHash);
      await deps.claims.delete(recordId, recordId, kept!.etag);
      open = open.filter((entry) => entry.inSplit >= tx.blockNumber);
    }
  } else if (record?.empty) {
    skip(
      open.filter((entry) => entry.inSplit < record.blockNumber),
      `the split had nothing to distribute at block ${record.blockNumber} and no distribution was found after the payment`,
    );
    open = open.filter((entry) => entry.inSplit >= record.blockNumber);
  }
  if (open.length === 0) return;

  // 2. Distributions someone else made after a payment.
  const found = await distributionsOf(deps, chain, split, token, open[0]!.inSplit, head);
  const need: PaidEntry[] = [];
  for (const entry of open) {
    const after = found.find((transfer) => transfer.blockNumber > entry.inSplit);
    if (!after) need.push(entry);
    else if (confirmed(after.blockNumber)) await settle([entry], after.txHash);
    else wait([entry]);
  }
  if (need.length === 0) return;

  // 3. The relayer distributes, once the split holds enough of the token to be worth the gas and while
  //    the day's budget lasts; until then the receipts stay paid, skipped with why.
  const minimum = distributeMinimum(deps.settings, token);
  if (minimum && minimum.units > 0n) {
    const holds = (await chain.splitHoldings(split, split, [token]))[token]?.distributable ?? 0n;
    if (holds === 0n) {
      // Nothing left: someone distributed it in the block of a payment, after it (none came after the block).
      await matchEmptied(need, found, 'the split has nothing to distribute and no distribution was found after the payment');
      return;
    }
    if (holds < minimum.units) {
      const amount = (units: bigint) => `${formatUnits(units, minimum.decimals)} ${minimum.symbol}`;
      skip(need, `the split holds ${amount(holds)}, below the ${amount(minimum.units)} the relayer distributes from (${minimum.setting}): its distribution waits`);
      return;
    }
  }
  const unit = await takeRelayerUnit(deps, 'distribution');
  if (!unit) {
    skip(need, "the relayer's distributions for today are spent (DISTRIBUTION_DAILY_BUDGET): its distribution waits for the next UTC day");
    return;
  }
  let sent: { txHash: string; blockNumber: number };
  try {
    sent = await chain.distribute(split, token);
  } catch (error) {
    await unit.giveBack();
    throw error;
  }
  head = Math.max(await chain.blockNumber(), sent.blockNumber);
  const moved = (await chain.splitTransfers(split, { fromBlock: sent.blockNumber, toBlock: sent.blockNumber })).some(
    (transfer) => transfer.kind === 'distribution' && lower(transfer.txHash) === lower(sent.txHash) && lower(transfer.token) === token,
  );
  const now = deps.clock.now();
  const next: DistributionRecord = { id: recordId, owner: split, createdAt: now, expiresAt: now + RECORD_TTL_MS, txHash: lower(sent.txHash), blockNumber: sent.blockNumber, empty: !moved };
  await deps.claims.upsert(recordId, next);

  if (!moved) {
    // Nothing was left to distribute: someone distributed it in the block of a payment, after it.
    const sameBlock = await distributionsOf(deps, chain, split, token, need[0]!.inSplit, sent.blockNumber);
    const others = sameBlock.filter((transfer) => lower(transfer.txHash) !== lower(sent.txHash));
    await matchEmptied(need, others, `the split had nothing to distribute (transaction ${sent.txHash}) and no distribution was found after the payment`);
    return;
  }
  if (!confirmed(sent.blockNumber)) {
    wait(need);
    return;
  }
  await settle(need.filter((entry) => entry.inSplit < sent.blockNumber), next.txHash);
  const stored = await deps.claims.get(recordId, recordId);
  if (stored) await deps.claims.delete(recordId, recordId, stored.etag);
};
