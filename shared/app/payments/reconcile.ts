/**
 * Reconciliation: the money of paid receipts sits in the merchant's split until someone calls its
 * `distribute(token)`. The relayer does, per split and token holding paid receipts; once that
 * distribution has its confirmations, every receipt paid before its block is `reconciled` with the
 * distribution's hash.
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
}

const lower = (text: string) => text.toLowerCase();

/** Where the receipt's money went: the split and token of the paying quote, and the block of the payment. */
const entryOf = (receipt: Receipt): PaidEntry | string => {
  const records = (receipt.payments ?? []).filter((record) => record.outcome === 'paid' || record.outcome === 'overpaid');
  const record = records.find((candidate) => candidate.txHash === receipt.transactionHash) ?? records[0];
  if (!record) return 'no paying transaction is recorded';
  const quote = [...(receipt.quotes ?? [])].reverse().find((candidate) => candidate.token === record.token);
  if (!quote) return `no ${record.token ?? 'token'} quote names the split it was paid into`;
  return { receipt, split: lower(quote.payTo), token: lower(quote.tokenAddress ?? ZERO_ADDRESS), paidBlock: record.blockNumber };
};

/** Distributions of the token out of the split from `fromBlock` to `toBlock`, oldest first, in bounded ranges. */
const distributionsOf = async (deps: ReconcileDeps, chain: Chain, split: string, token: string, fromBlock: number, toBlock: number): Promise<SplitTransfer[]> => {
  const step = Math.max(1, deps.settings.payments.watchBlockRange);
  const found: SplitTransfer[] = [];
  for (let from = Math.max(fromBlock, toBlock - SCAN_CHUNKS * step + 1, 0); from <= toBlock; from += step) {
    const transfers = await chain.splitTransfers(split, { fromBlock: from, toBlock: Math.min(toBlock, from + step - 1) });
    found.push(...transfers.filter((transfer) => transfer.kind === 'distribution' && lower(transfer.token) === token));
  }
  return found;
};

/**
 * The timer's work. Paid receipts are grouped by split and token; for each group:
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

  const groups = new Map<string, PaidEntry[]>();
  for (const receipt of await deps.receipts.inStatuses(['paid'], { limit: RECEIPTS_PER_RUN })) {
    const entry = entryOf(receipt);
    if (typeof entry === 'string') {
      report.skipped.push({ receiptId: receipt.receiptId, reason: entry });
      log(`splits-reconcile: receipt ${receipt.receiptId} skipped: ${entry}`);
      continue;
    }
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

/** A chain call that failed for this split alone (a revert, an estimate that failed): the other splits go on. */
const isRecoverable = (error: unknown) => {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'CALL_EXCEPTION' || code === 'INSUFFICIENT_FUNDS' || code === 'UNPREDICTABLE_GAS_LIMIT';
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
  let open = [...entries].sort((a, b) => a.paidBlock - b.paidBlock);

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
      const match = distributions.find((transfer) => transfer.blockNumber >= entry.paidBlock);
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
      const before = open.filter((entry) => entry.paidBlock < tx.blockNumber);
      await settle(before, record.txHash);
      await deps.claims.delete(recordId, recordId, kept!.etag);
      open = open.filter((entry) => entry.paidBlock >= tx.blockNumber);
    }
  } else if (record?.empty) {
    skip(
      open.filter((entry) => entry.paidBlock < record.blockNumber),
      `the split had nothing to distribute at block ${record.blockNumber} and no distribution was found after the payment`,
    );
    open = open.filter((entry) => entry.paidBlock >= record.blockNumber);
  }
  if (open.length === 0) return;

  // 2. Distributions someone else made after a payment.
  const found = await distributionsOf(deps, chain, split, token, open[0]!.paidBlock, head);
  const need: PaidEntry[] = [];
  for (const entry of open) {
    const after = found.find((transfer) => transfer.blockNumber > entry.paidBlock);
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
    const sameBlock = await distributionsOf(deps, chain, split, token, need[0]!.paidBlock, sent.blockNumber);
    const others = sameBlock.filter((transfer) => lower(transfer.txHash) !== lower(sent.txHash));
    await matchEmptied(need, others, `the split had nothing to distribute (transaction ${sent.txHash}) and no distribution was found after the payment`);
    return;
  }
  if (!confirmed(sent.blockNumber)) {
    wait(need);
    return;
  }
  await settle(need.filter((entry) => entry.paidBlock < sent.blockNumber), next.txHash);
  const stored = await deps.claims.get(recordId, recordId);
  if (stored) await deps.claims.delete(recordId, recordId, stored.etag);
};
