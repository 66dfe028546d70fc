/**
 * Every transfer that reached a shop over a block range, and whose it is: into its current split
 * (the split's own log reads, and every token's `Transfer`s, accepted or not) and into the deposit
 * addresses of its receipts that sweep there. A transfer into the split from one of those addresses is
 * a sweep; any other transfer in is a payment when the payment ledger gives it to something (a
 * receipt's payment at its address, an x402 settlement to the split), and unattributed otherwise.
 * ETH sent to a deposit address leaves no log: it is measured by the address's balance, against the
 * receipt's recorded ETH payments. The account of a range (`reconcileInflows`) holds all of it
 * against the payment records, token by token.
 */
import { DomainError } from '../domain/errors';
import {
  reconcileTotals,
  type DepositEthView,
  type InflowAttribution,
  type RecordedAmount,
  type SplitTransactionView,
  type TokenReconciliation,
} from '../domain/inflows';
import { paymentTxClaimId, ZERO_ADDRESS } from '../domain/payment';
import type { Receipt } from '../domain/receipt';
import type { Chain, ChainMove, SplitTransfer } from '../ports/chain';
import { DependencyUnavailableError } from '../ports/errors';
import { eachShopReceipt } from './shop-receipts';
import type { AppDeps } from './deps';
import { loadMerchant } from './merchants';
import { paymentTransferClaimId } from './payments/ledger';

export type InflowDeps = Pick<AppDeps, 'merchants' | 'receipts' | 'claims' | 'clock' | 'chain' | 'settings'>;

/** Blocks one log read spans at most (as `GET /api/split/transactions` bounds a range). */
export const MAX_BLOCK_RANGE = 10_000;
/**
 * Receipts read, newest first, to find the shop's deposit addresses and payment records (the store has
 * no query by deposit address). Past it the answer says `receiptsTruncated`: transfers into older
 * receipts' addresses are not listed, and their sweeps show as unattributed.
 */
export const INFLOW_MAX_RECEIPTS = 1_000;
const RECEIPT_PAGE = 200;
/** Transfers whose ledger claims are read together (up to three point reads each). */
const LEDGER_READS_AT_ONCE = 50;

const lower = (text: string) => text.toLowerCase();

const chainOf = (deps: Pick<AppDeps, 'chain'>): Chain => {
  if (!deps.chain) throw new DependencyUnavailableError('chain', 'no chain is configured (CHAIN_RPC_URL)');
  return deps.chain;
};

/** The receipts whose money reaches `split`, and the deposit addresses among them. */
interface ShopScope {
  split: string;
  /** Deposit address → its receipt, for the receipts whose address sweeps to `split`. */
  deposits: Map<string, Receipt>;
  /** Receipts paid at such an address, or straight to `split` (an x402 order, a quote made before deposit addresses). */
  receipts: Receipt[];
  truncated: boolean;
}

const shopScope = async (deps: InflowDeps, wallet: string, split: string, maxReceipts: number): Promise<ShopScope> => {
  const deposits = new Map<string, Receipt>();
  const receipts: Receipt[] = [];
  const { truncated } = await eachShopReceipt(deps, wallet, { max: maxReceipts, pageSize: RECEIPT_PAGE }, (receipt) => {
    if (receipt.deposit) {
      if (lower(receipt.deposit.split) !== split) return;
      deposits.set(lower(receipt.deposit.address), receipt);
      receipts.push(receipt);
    } else if ((receipt.quotes ?? []).some((quote) => lower(quote.payTo) === split)) receipts.push(receipt);
  });
  return { split, deposits, receipts, truncated };
};

/** The contract address of a record's token: the deployment's, or, for one it no longer accepts, the receipt's quote's. */
const tokenAddressOf = (deps: InflowDeps, receipt: Receipt, symbol: string): string | undefined => {
  if (symbol === 'ETH') return ZERO_ADDRESS;
  const address = deps.settings.tokens.find((token) => token.symbol === symbol)?.address ?? (receipt.quotes ?? []).findLast((quote) => quote.token === symbol)?.tokenAddress;
  return address ? lower(address) : undefined;
};

const inRange = (block: number, range: BlockRange) => block >= range.fromBlock && block <= range.toBlock;

type BlockRange = { fromBlock: number; toBlock: number };

/** A listed transfer whose attribution may still need the payment ledger (`undefined`). */
type Read = Omit<SplitTransactionView, 'attribution'> & { attribution: InflowAttribution | null | undefined };

const fromSplitLog = (scope: ShopScope, transfer: SplitTransfer): Read => {
  const base = { kind: transfer.kind, token: lower(transfer.token), from: lower(transfer.from), to: lower(transfer.to), amount: transfer.amount, txHash: lower(transfer.txHash), blockNumber: transfer.blockNumber, logIndex: transfer.logIndex };
  if (transfer.kind !== 'payment') return { ...base, attribution: null, receiptId: null };
  const swept = scope.deposits.get(base.from);
  return swept ? { ...base, attribution: 'sweep', receiptId: swept.receiptId } : { ...base, attribution: undefined, receiptId: null };
};

const fromTokenTransfer = (scope: ShopScope, move: ChainMove): Read => {
  const base = { token: lower(move.token), from: lower(move.from), to: lower(move.to), amount: move.amount, txHash: lower(move.txHash), blockNumber: move.blockNumber, logIndex: move.logIndex };
  const receipt = scope.deposits.get(base.to);
  if (receipt) return { ...base, kind: 'deposit', attribution: undefined, receiptId: receipt.receiptId };
  // Into the split: a token the split's own read leaves out (one the shop does not accept).
  const swept = scope.deposits.get(base.from);
  return swept ? { ...base, kind: 'payment', attribution: 'sweep', receiptId: swept.receiptId } : { ...base, kind: 'payment', attribution: undefined, receiptId: null };
};

/** ETH into each deposit address over the range, by balance, against the receipt's recorded ETH payments. */
const depositEthOf = async (chain: Chain, scope: ShopScope, transfers: readonly Read[], range: BlockRange): Promise<DepositEthView[]> => {
  const addresses = [...scope.deposits.keys()];
  if (addresses.length === 0) return [];
  const swept = new Map<string, bigint>();
  for (const transfer of transfers) {
    if (transfer.attribution === 'sweep' && transfer.token === ZERO_ADDRESS) swept.set(transfer.from, (swept.get(transfer.from) ?? 0n) + BigInt(transfer.amount));
  }
  const after = await chain.balancesOf(addresses, [ZERO_ADDRESS], range.toBlock);
  // An address holding nothing at the end that swept nothing held nothing before: one read spared.
  const moved = addresses.filter((address) => (after[address]?.[ZERO_ADDRESS] ?? 0n) > 0n || swept.has(address));
  const before = moved.length > 0 && range.fromBlock > 0 ? await chain.balancesOf(moved, [ZERO_ADDRESS], range.fromBlock - 1) : {};
  const rows: DepositEthView[] = [];
  for (const [address, receipt] of scope.deposits) {
    const received = (after[address]?.[ZERO_ADDRESS] ?? 0n) - (before[address]?.[ZERO_ADDRESS] ?? 0n) + (swept.get(address) ?? 0n);
    const recorded = (receipt.payments ?? []).filter((record) => record.token === 'ETH' && inRange(record.blockNumber, range)).reduce((sum, record) => sum + BigInt(record.amount), 0n);
    if (received === 0n && recorded === 0n) continue;
    rows.push({ address, receiptId: receipt.receiptId, received: received.toString(), recorded: recorded.toString(), unattributed: (received > recorded ? received - recorded : 0n).toString() });
  }
  return rows;
};

interface RangeInflows {
  split: string;
  transfers: Read[];
  depositEth: DepositEthView[];
  scope: ShopScope;
}

/** Everything that moved into (and out of) the split and into its deposit addresses over the range, oldest first; the ledger not yet asked. */
const readRange = async (deps: InflowDeps, wallet: string, split: string, range: BlockRange, maxReceipts: number): Promise<RangeInflows> => {
  const chain = chainOf(deps);
  const scope = await shopScope(deps, wallet, split, maxReceipts);
  const watched = [split, ...scope.deposits.keys()];
  const read: Read[] = [];
  // A window at a time: a long range's account does not send all its log queries at once.
  for (let from = range.fromBlock; from <= range.toBlock; from += MAX_BLOCK_RANGE) {
    const window = { fromBlock: from, toBlock: Math.min(range.toBlock, from + MAX_BLOCK_RANGE - 1) };
    const [own, moves] = await Promise.all([chain.splitTransfers(split, window), chain.tokenTransfersInto(watched, window)]);
    // The split's own read has the accepted tokens' transfers into it too: each log once.
    const seen = new Set(own.map((transfer) => `${lower(transfer.txHash)}:${transfer.logIndex}`));
    read.push(...own.map((transfer) => fromSplitLog(scope, transfer)), ...moves.filter((move) => !seen.has(`${lower(move.txHash)}:${move.logIndex}`)).map((move) => fromTokenTransfer(scope, move)));
  }
  const transfers = read.sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex);
  return { split, transfers, depositEth: await depositEthOf(chain, scope, transfers, range), scope };
};

/**
 * Asks the payment ledger whose each transfer in is (a sweep is known already): one the ledger
 * claimed (the transfer, its transaction whole, or for ETH sent straight to the split the
 * transaction's own value) is a payment of its claimant, whichever way it came (the portal, the
 * watcher, a card provider, an x402 settlement); anything else is unattributed. The ledger, not the
 * receipts' records: the account of a range then holds the records against it, and a transfer
 * claimed but never recorded shows as a difference instead of passing as unattributed.
 */
const attribute = async (deps: InflowDeps, wallet: string, transfers: readonly Read[]): Promise<SplitTransactionView[]> => {
  const chainId = chainOf(deps).chainId;
  const one = async (transfer: Read): Promise<SplitTransactionView> => {
    if (transfer.attribution !== undefined) return { ...transfer, attribution: transfer.attribution };
    const ids = [paymentTransferClaimId(chainId, transfer.txHash, transfer.logIndex), paymentTxClaimId(chainId, transfer.txHash)];
    if (transfer.token === ZERO_ADDRESS) ids.push(paymentTransferClaimId(chainId, transfer.txHash, -1));
    const owner = (await Promise.all(ids.map((id) => deps.claims.get(id, id)))).find((claim) => claim !== undefined)?.value.owner;
    // Unattributed at a deposit address: still named by the receipt whose address it reached.
    if (owner === undefined) return { ...transfer, attribution: 'unattributed' };
    // A receipt is named `<wallet>:<receiptId>` in the ledger; an x402 purchase of something else is not a receipt.
    const receiptId = owner.startsWith(`${wallet}:`) ? owner.slice(wallet.length + 1) : null;
    return { ...transfer, attribution: 'payment', receiptId };
  };
  // A range's account asks about every transfer: a batch at a time, so a busy range does not flood the store.
  const attributed: SplitTransactionView[] = [];
  for (let start = 0; start < transfers.length; start += LEDGER_READS_AT_ONCE) {
    attributed.push(...(await Promise.all(transfers.slice(start, start + LEDGER_READS_AT_ONCE).map(one))));
  }
  return attributed;
};

/** The range a caller asked for, checked against the head (default: the latest `MAX_BLOCK_RANGE` blocks). */
const blockRange = async (chain: Chain, query: { fromBlock?: number; toBlock?: number }, maxSpan: number | null = MAX_BLOCK_RANGE): Promise<BlockRange> => {
  const head = await chain.blockNumber();
  if (query.toBlock !== undefined && query.toBlock > head) {
    throw new DomainError('invalid_input', `toBlock: must not be above the chain head (${head})`, { field: 'toBlock', head });
  }
  const toBlock = query.toBlock ?? head;
  const fromBlock = query.fromBlock ?? Math.max(0, toBlock - MAX_BLOCK_RANGE + 1);
  if (fromBlock > toBlock) throw new DomainError('invalid_input', 'fromBlock: must not be after toBlock', { field: 'fromBlock' });
  if (maxSpan !== null && toBlock - fromBlock + 1 > maxSpan) {
    throw new DomainError('invalid_input', `toBlock: a range spans at most ${maxSpan} blocks`, { field: 'toBlock' });
  }
  return { fromBlock, toBlock };
};

/**
 * A page of the split's transfers and its deposit addresses' over a bounded range (default: the latest
 * 10,000 blocks), oldest first, each attributed; with the range's ETH at deposit addresses, by balance.
 */
export const listSplitTransactions = async (
  deps: InflowDeps,
  wallet: string,
  query: { fromBlock?: number; toBlock?: number; limit: number; cursor?: string },
  options: { maxReceipts?: number } = {},
) => {
  const { split } = await loadMerchant(deps, wallet);
  if (!split) return { ok: true as const, split: null, fromBlock: null, toBlock: null, transactions: [], depositEth: [], receiptsTruncated: false, nextCursor: null };
  const range = await blockRange(chainOf(deps), query);
  const read = await readRange(deps, wallet, lower(split.address), range, options.maxReceipts ?? INFLOW_MAX_RECEIPTS);
  const all = read.transfers;
  const after = query.cursor ? decodeCursor(query.cursor) : undefined;
  const start = after ? all.findIndex((t) => t.blockNumber > after.block || (t.blockNumber === after.block && t.logIndex > after.logIndex)) : 0;
  const page = start < 0 ? [] : all.slice(start, start + query.limit);
  const last = page.at(-1);
  const more = start >= 0 && start + query.limit < all.length;
  return {
    ok: true as const,
    split: read.split,
    fromBlock: range.fromBlock,
    toBlock: range.toBlock,
    // The ledger is asked for this page's transfers only.
    transactions: await attribute(deps, wallet, page),
    depositEth: read.depositEth,
    receiptsTruncated: read.scope.truncated,
    nextCursor: more && last ? `${last.blockNumber}:${last.logIndex}` : null,
  };
};

export interface InflowReconciliation {
  split: string;
  fromBlock: number;
  toBlock: number;
  tokens: TokenReconciliation[];
  /** Every token's `difference` is zero. */
  balanced: boolean;
  /** The transfers nobody claims, for the merchant to look into (ETH at deposit addresses: in `depositEth`). */
  unattributed: SplitTransactionView[];
  depositEth: DepositEthView[];
  receiptsTruncated: boolean;
}

/**
 * The account of a block range (any length; the chain is read a bounded window at a time), token by
 * token: what reached the split and the deposit addresses equals the payments recorded on the shop's
 * receipts (x402 settlements included) mined in the range, plus the unattributed, to the unit.
 */
export const reconcileInflows = async (deps: InflowDeps, wallet: string, range: BlockRange, options: { maxReceipts?: number } = {}): Promise<InflowReconciliation> => {
  const { split } = await loadMerchant(deps, wallet);
  if (!split) throw new DomainError('split_required', 'this shop has no split contract yet');
  const checked = await blockRange(chainOf(deps), range, null);
  const read = await readRange(deps, wallet, lower(split.address), checked, options.maxReceipts ?? INFLOW_MAX_RECEIPTS);
  const transfers = await attribute(deps, wallet, read.transfers);
  const records: RecordedAmount[] = read.scope.receipts.flatMap((receipt) =>
    (receipt.payments ?? []).flatMap((record) => {
      if (record.token === null || !inRange(record.blockNumber, checked)) return [];
      const token = tokenAddressOf(deps, receipt, record.token);
      return token ? [{ token, amount: BigInt(record.amount) }] : [];
    }),
  );
  const tokens = reconcileTotals(transfers, read.depositEth, records);
  return {
    split: read.split,
    ...checked,
    tokens,
    balanced: tokens.every((token) => token.difference === '0'),
    unattributed: transfers.filter((transfer) => transfer.attribution === 'unattributed'),
    depositEth: read.depositEth,
    receiptsTruncated: read.scope.truncated,
  };
};

const decodeCursor = (cursor: string) => {
  const match = /^(\d+):(\d+)$/.exec(cursor);
  if (!match) throw new DomainError('invalid_input', 'cursor: is not a cursor this API gave out', { field: 'cursor' });
  return { block: Number(match[1]), logIndex: Number(match[2]) };
};
