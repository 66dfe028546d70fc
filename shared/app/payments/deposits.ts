/**
 * Receipts' deposit addresses: each receipt is paid at an address of its own (a forwarder the
 * DepositFactory can create there, which can only send on to the shop's split), fixed at its first
 * quote. The watcher's list of open addresses lives in sixteen chain-state documents, by the
 * address's first hex digit.
 */
import { DomainError } from '../../domain/errors';
import type { Merchant } from '../../domain/merchant';
import { DEPOSIT_SHARDS, depositShardId, type DepositWatch } from '../../domain/payment';
import type { Receipt } from '../../domain/receipt';
import { DependencyUnavailableError } from '../../ports/errors';
import type { AppDeps } from '../deps';
import { isEtagMismatchOrDuplicate, withEtagRetry } from '../etag-retry';

/** How long an address stays watched after its receipt could last be paid (its expiry, or its last quote's lock): late and extra transfers are still recorded on it. */
export const DEPOSIT_WATCH_AFTER_MS = 24 * 60 * 60_000;
/** An entry is written again only when its end moves by more than this (fewer contended writes). */
const WATCH_EXTEND_STEP_MS = 10 * 60_000;

type DepositDeps = Pick<AppDeps, 'chain' | 'chainState' | 'clock'>;

/**
 * The receipt's deposit address and the split it sweeps to: the one it has, or the one its shop's
 * split gives it now. Without a deposit factory on this deployment there is none, and nothing is quoted.
 */
export const depositOf = async (deps: Pick<AppDeps, 'chain'>, receipt: Receipt, merchant: Merchant): Promise<{ address: string; split: string }> => {
  if (receipt.deposit) return receipt.deposit;
  const split = merchant.split?.address.toLowerCase();
  if (!split) throw new DomainError('split_required', 'this shop has no split contract yet, so it cannot take payments');
  const address = deps.chain && (await deps.chain.depositAddress(split, receipt.wallet, receipt.receiptId));
  if (!address) throw new DependencyUnavailableError('chain', 'deposit addresses are not configured on this deployment (DEPOSIT_FACTORY_ADDRESS)');
  return { address, split };
};

/**
 * Puts the address on the watcher's list until `watch.until` (or keeps it there longer), written
 * before the address is handed out, so no transfer to it can precede its watch. Ended entries of the
 * same document go as it is written.
 */
export const watchDeposit = (deps: DepositDeps, address: string, watch: DepositWatch) =>
  withEtagRetry<void>(
    async ({ write }) => {
      const id = depositShardId(deps.chain!.chainId, address);
      const stored = await deps.chainState.get(id, id);
      const now = deps.clock.now();
      const deposits = stored?.value.deposits ?? {};
      const known = deposits[address];
      if (known && known.until >= watch.until - WATCH_EXTEND_STEP_MS && (known.eth || !watch.eth)) return;
      const kept = Object.fromEntries(Object.entries(deposits).filter(([, entry]) => entry.until > now));
      const entry: DepositWatch = { ...watch, until: Math.max(known?.until ?? 0, watch.until + WATCH_EXTEND_STEP_MS), ...((watch.eth || known?.eth) && { eth: true }) };
      const next = { id, deposits: { ...kept, [address]: entry }, updatedAt: now };
      await write(() => (stored ? deps.chainState.replace(id, next, stored.etag) : deps.chainState.create(id, next)));
    },
    {
      retryOn: isEtagMismatchOrDuplicate,
      exhausted: () => {
        throw new DomainError('conflict', 'the watch list kept changing; try again');
      },
    },
  );

/** Every deposit address watched now, read from its sixteen documents together. */
export const openDeposits = async (deps: DepositDeps): Promise<Map<string, DepositWatch>> => {
  const chainId = deps.chain!.chainId;
  const now = deps.clock.now();
  const shards = await Promise.all(DEPOSIT_SHARDS.map((shard) => deps.chainState.get(depositShardId(chainId, `0x${shard}`), depositShardId(chainId, `0x${shard}`))));
  const open = new Map<string, DepositWatch>();
  for (const shard of shards) {
    for (const [address, entry] of Object.entries(shard?.value.deposits ?? {})) if (entry.until > now) open.set(address, entry);
  }
  return open;
};
