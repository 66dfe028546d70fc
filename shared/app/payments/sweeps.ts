/**
 * Sweeping deposit addresses: a receipt paid at its deposit address keeps its money there until a
 * `DepositFactory.sweepMany` moves it to the shop's split. Anyone may send one (the funds can only go
 * to each deposit's own split): the reconcile timer has the relayer sweep a split's deposits before it
 * distributes (`sweepForReconcile`), and the merchant's console hands the same call to the merchant's
 * own wallet (`depositSweepCall`), which then pays the gas.
 */
import { DomainError } from '../../domain/errors';
import type { Receipt } from '../../domain/receipt';
import type { Chain, DepositSweep } from '../../ports/chain';
import type { Claim } from '../../ports/documents';
import { DependencyUnavailableError } from '../../ports/errors';
import { eachShopReceipt } from '../shop-receipts';
import type { AppDeps } from '../deps';
import { takeRelayerUnit } from '../relayer-budget';

/**
 * Deposits one `sweepMany` names at most: about 82,400 gas each deployed and swept in a batch, so some
 * 4.1 M gas a transaction (a fraction of a block), and one unit of the relayer's sweep budget.
 */
export const SWEEP_BATCH_SIZE = 50;
/** A deposit whose sweep the factory reported failed (a token that froze the address) is not sent for again by the relayer before this. */
export const SWEEP_RETRY_AFTER_MS = 24 * 3_600_000;
/** A shop's receipts its console's sweep call looks through, newest first. */
const SHOP_RECEIPTS_SCANNED = 500;
const PAGE = 100;

const lower = (text: string) => text.toLowerCase();

/** Kept in `claims` when the relayer's sweep of a deposit failed: until `expiresAt` the relayer leaves it alone. */
export interface SweepFailure extends Claim {
  txHash: string;
}

export const sweepFailureId = (chainId: number, address: string) => `deposit-sweep-failed:${chainId}:${lower(address)}`;

/** A deposit for the relayer to sweep: `address` is the receipt's deposit address, which `sweep` names. */
export interface PendingSweep {
  address: string;
  sweep: DepositSweep;
}

/** What became of a deposit the relayer was to sweep: swept in `blockNumber`, or left with the reason. */
export type SweepOutcome = { swept: true; txHash: string; blockNumber: number } | { swept: false; reason: string };

/** A chain call that failed for this batch or split alone (a revert, an estimate that failed): the others go on. */
export const isRecoverable = (error: unknown) => {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'CALL_EXCEPTION' || code === 'INSUFFICIENT_FUNDS' || code === 'UNPREDICTABLE_GAS_LIMIT';
};

/** The deposits whose relayer sweep failed lately (their `SweepFailure` not yet expired), with when each may be tried again. */
export const recentSweepFailures = async (deps: Pick<AppDeps, 'claims' | 'clock'>, chain: Chain, addresses: readonly string[]): Promise<Map<string, number>> => {
  const now = deps.clock.now();
  const found = await Promise.all(addresses.map(async (address) => [address, (await deps.claims.get(sweepFailureId(chain.chainId, address), sweepFailureId(chain.chainId, address)))?.value] as const));
  return new Map(found.flatMap(([address, claim]) => (claim?.expiresAt !== undefined && claim.expiresAt > now ? [[address, claim.expiresAt] as const] : [])));
};

/**
 * The relayer sweeps these deposits, `SWEEP_BATCH_SIZE` to a `sweepMany`, each transaction on a unit
 * of the day's sweep budget (`SWEEP_DAILY_BUDGET`; given back when the call throws, as a distribution's
 * is). A deposit the factory reports failed keeps its funds and is recorded, so the relayer does not
 * pay for it again before `SWEEP_RETRY_AFTER_MS`; the rest of its batch is swept. A batch whose call
 * fails for that batch alone (a revert) is reported failed and the next batch goes on; an unreachable
 * chain or store throws.
 */
export const sweepForReconcile = async (
  deps: Pick<AppDeps, 'claims' | 'clock' | 'settings'>,
  chain: Chain,
  pending: readonly PendingSweep[],
): Promise<Map<string, SweepOutcome>> => {
  const outcomes = new Map<string, SweepOutcome>();
  for (let start = 0; start < pending.length; start += SWEEP_BATCH_SIZE) {
    const batch = pending.slice(start, start + SWEEP_BATCH_SIZE);
    const unit = await takeRelayerUnit(deps, 'sweep');
    if (!unit) {
      const reason = "the relayer's deposit sweeps for today are spent (SWEEP_DAILY_BUDGET): the sweep waits for the next UTC day (the merchant may sweep from the console)";
      for (const { address } of pending.slice(start)) outcomes.set(address, { swept: false, reason });
      break;
    }
    let sent: { txHash: string; blockNumber: number; failed: string[] };
    try {
      sent = await chain.sweepDeposits(batch.map((entry) => entry.sweep));
    } catch (error) {
      await unit.giveBack();
      if (error instanceof DomainError || !isRecoverable(error)) throw error;
      for (const { address } of batch) outcomes.set(address, { swept: false, reason: `sweep failed: ${(error as Error).message}` });
      continue;
    }
    const failed = new Set(sent.failed.map(lower));
    const now = deps.clock.now();
    for (const { address } of batch) {
      if (!failed.has(lower(address))) {
        outcomes.set(address, { swept: true, txHash: sent.txHash, blockNumber: sent.blockNumber });
        continue;
      }
      const id = sweepFailureId(chain.chainId, address);
      const record: SweepFailure = { id, owner: lower(address), createdAt: now, expiresAt: now + SWEEP_RETRY_AFTER_MS, txHash: sent.txHash };
      await deps.claims.upsert(id, record);
      outcomes.set(address, {
        swept: false,
        reason: `the sweep of its deposit address failed (SweepFailed in ${sent.txHash}: the token refused the address or ran out of its gas): the money stays there, swept again after ${new Date(record.expiresAt!).toISOString()}`,
      });
    }
  }
  return outcomes;
};

/** The shop's newest receipts, up to `SHOP_RECEIPTS_SCANNED`, in one status or any. */
const shopReceipts = async (deps: Pick<AppDeps, 'receipts'>, wallet: string, status?: 'paid'): Promise<Receipt[]> => {
  const found: Receipt[] = [];
  await eachShopReceipt(deps, wallet, { max: SHOP_RECEIPTS_SCANNED, pageSize: PAGE, ...(status && { status }) }, (receipt) => found.push(receipt));
  return found;
};

/**
 * The deposit addresses (lower-case) of the shop's newest paid receipts (up to 500) that sweep into
 * `split`: where money paid to the shop may still wait for its sweep (reconciled receipts were swept).
 */
export const paidDepositAddresses = async (deps: Pick<AppDeps, 'receipts'>, wallet: string, split: string): Promise<string[]> => [
  ...new Set(
    (await shopReceipts(deps, wallet, 'paid')).flatMap((receipt) => (receipt.deposit && lower(receipt.deposit.split) === lower(split) ? [lower(receipt.deposit.address)] : [])),
  ),
];

/**
 * `POST /api/console/deposits/sweep`: the `sweepMany` the merchant's own wallet can send (`to`, the
 * factory; `data`, its calldata) to move what waits at its deposit addresses to their splits, at most
 * `SWEEP_BATCH_SIZE` deposits a call (`remaining`: how many more hold something; the next call names
 * them once these are swept). Without `token`: the shop's newest paid receipts (up to 500) whose
 * deposit address still holds an accepted token, each with the tokens it holds. With `token` (any
 * ERC-20, the zero address for ETH): the recovery of a token sent to a deposit address, the shop's
 * newest receipts of any status that hold it; the split then holds it, and its `distribute(token)` pays
 * it out. `receiptId` narrows either to that receipt. The service sends nothing and pays no gas.
 */
export const depositSweepCall = async (deps: Pick<AppDeps, 'receipts' | 'chain' | 'settings'>, wallet: string, input: { token?: string; receiptId?: string }) => {
  const chain = deps.chain;
  if (!chain) throw new DependencyUnavailableError('chain', 'no chain is configured (CHAIN_RPC_URL)');
  let receipts: Receipt[];
  if (input.receiptId !== undefined) {
    const stored = await deps.receipts.get(wallet, input.receiptId);
    if (!stored) throw new DomainError('not_found', `receipt ${input.receiptId} not found`);
    if (!stored.value.deposit) throw new DomainError('invalid_input', 'receiptId: this receipt has no deposit address (it was never quoted, or an agent paid it by x402)', { field: 'receiptId' });
    receipts = [stored.value];
  } else {
    receipts = (await shopReceipts(deps, wallet, input.token === undefined ? 'paid' : undefined)).filter((receipt) => receipt.deposit);
  }
  const tokens = input.token !== undefined ? [lower(input.token)] : deps.settings.tokens.map((token) => lower(token.address));
  const addresses = receipts.map((receipt) => lower(receipt.deposit!.address));
  const balances = addresses.length === 0 || tokens.length === 0 ? {} : await chain.balancesOf(addresses, tokens);
  const holding = receipts.flatMap((receipt) => {
    const address = lower(receipt.deposit!.address);
    const held = tokens.filter((token) => (balances[address]?.[token] ?? 0n) > 0n);
    return held.length === 0 ? [] : [{ receipt, address, tokens: held }];
  });
  const batch = holding.slice(0, SWEEP_BATCH_SIZE);
  const call = await chain.sweepCall(batch.map(({ receipt, tokens: held }) => ({ split: lower(receipt.deposit!.split), wallet: receipt.wallet, receiptId: receipt.receiptId, tokens: held })));
  return {
    ok: true as const,
    chainId: chain.chainId,
    to: call.to,
    data: batch.length === 0 ? null : call.data,
    deposits: batch.map(({ receipt, address, tokens: held }) => ({ receiptId: receipt.receiptId, address, split: lower(receipt.deposit!.split), tokens: held })),
    remaining: holding.length - batch.length,
  };
};
