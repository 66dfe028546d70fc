/**
 * Paying a receipt on chain: what a quote fixes, how a token amount is made from a USD total, and
 * the rules that decide whether a transaction pays a receipt. Pure: the chain's facts come in as
 * values, the decision goes out as a value; the use cases in shared/app/payments do the I/O.
 */
import { z } from 'zod';

export const payTokens = ['USDC', 'USDT', 'ETH'] as const;
export type PayTokenSymbol = (typeof payTokens)[number];
export const PayTokenSymbol = z.enum(payTokens);

export const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000';

/** A token a buyer can pay with on the deployment's chain (ETH: the zero address, no contract). */
export interface PayToken {
  symbol: PayTokenSymbol;
  address: string;
  decimals: number;
}

/**
 * The range a Chainlink aggregator holds its answers to (`minAnswer`, `maxAnswer`, in the answer's
 * decimals): it refuses reports outside it, so past a bound the answer stays at the bound.
 */
export interface FeedBounds {
  min: bigint;
  max: bigint;
}

/** A price from the ETH/USD feed: `answer` USD per ETH with `decimals` decimals; `updatedAt` Unix ms. */
export interface FeedPrice {
  answer: bigint;
  decimals: number;
  updatedAt: number;
  /** Absent when the feed names none (no aggregator behind it, or one without bounds). */
  bounds?: FeedBounds;
}

/** What the buyer pays, fixed for the lock: exactly the amount due, to the receipt's own deposit address. */
export interface Quote {
  quoteId: string;
  token: PayTokenSymbol;
  /** The token contract, lower-case; null for ETH. */
  tokenAddress: string | null;
  chainId: number;
  /**
   * Where the buyer pays, lower-case: the receipt's deposit address (quotes made before deposit
   * addresses named the merchant's split; a payment of one is still judged by where it went).
   */
  payTo: string;
  /** Atomic units, decimal string. */
  amount: string;
  decimals: number;
  /** The USD the amount stands for (the customer total). */
  usd: number;
  /** USD per whole token when the quote was made (1 for the stablecoins). */
  rate: number;
  createdAt: number;
  expiresAt: number;
  /** EIP-681 payment request: what the QR code holds, so a phone wallet pays without the page. */
  uri: string;
}

const pow10 = (n: number) => 10n ** BigInt(n);

/**
 * The atomic amount for `cents` of USD: exactly what a quote asks for. The stablecoins count 1:1 (the
 * customer total in token units, nothing added); ETH at the feed's price, rounded up to the wei so the
 * merchant never receives less than the total.
 */
export const quoteAmount = (token: PayToken, cents: number, price?: FeedPrice): bigint => {
  if (!Number.isSafeInteger(cents) || cents < 0) throw new RangeError('cents must be a non-negative integer');
  if (token.symbol !== 'ETH') return BigInt(cents) * pow10(token.decimals - 2);
  if (!price || price.answer <= 0n) throw new RangeError('ETH needs a positive feed price');
  const numerator = BigInt(cents) * pow10(token.decimals) * pow10(price.decimals);
  const denominator = 100n * price.answer;
  return (numerator + denominator - 1n) / denominator;
};

/** USD per whole token, as a number for display (the quote's `rate`). */
export const rateOf = (token: PayToken, price?: FeedPrice): number =>
  token.symbol === 'ETH' ? Number(price!.answer) / 10 ** price!.decimals : 1;

/**
 * A feed answer older than its heartbeat, or more than a minute ahead of our clock, is not a price;
 * nor is one at or beyond its aggregator's bounds: the market may be anywhere past the bound, and the
 * answer only says it is not inside. A feed that names no bounds is judged by its age and sign alone.
 */
export const isStale = (price: FeedPrice, now: number, heartbeatMs: number): boolean =>
  price.answer <= 0n ||
  now - price.updatedAt > heartbeatMs ||
  price.updatedAt - now > 60_000 ||
  (price.bounds !== undefined && (price.answer <= price.bounds.min || price.answer >= price.bounds.max));

/** EIP-681: ETH as `ethereum:<to>@<chain>?value=<wei>`, a token as a `transfer(address,uint256)` call. */
export const paymentUri = (input: { chainId: number; payTo: string; tokenAddress: string | null; amount: string }): string =>
  input.tokenAddress
    ? `ethereum:${input.tokenAddress}@${input.chainId}/transfer?address=${input.payTo}&uint256=${input.amount}`
    : `ethereum:${input.payTo}@${input.chainId}?value=${input.amount}`;

export { formatUnits } from './units';

export const TX_HASH = /^0x[0-9a-fA-F]{64}$/;
export const TxHash = z
  .string()
  .regex(TX_HASH, 'must be a 0x-prefixed 32-byte transaction hash')
  .transform((hash) => hash.toLowerCase());

/** A value moved in a transaction: an ERC-20 `Transfer` log, or ETH (token = the zero address). */
export interface ValueMove {
  token: string;
  from: string;
  to: string;
  amount: string;
  logIndex: number;
  /**
   * The nonce of the EIP-3009 authorization this transfer carries out, when the token logged its
   * `AuthorizationUsed(from, nonce)` right before it: an x402 settlement's transfer, which is that
   * payment's whoever reports the hash.
   */
  authorizationNonce?: string;
}

/** A mined transaction as the verification rules need it. */
export interface MinedTransaction {
  hash: string;
  /** 1 success, 0 reverted. */
  status: 0 | 1;
  from: string;
  /** The called contract or the ETH recipient, lower-case; null for a deployment. */
  to: string | null;
  /** The call data, lower-case hex ('0x' for a plain ETH transfer). */
  data: string;
  blockNumber: number;
  /** Unix seconds, as blocks carry it. */
  blockTimestamp: number;
  /** Token transfers (configured tokens) and ETH received by a split, in log order. */
  moves: ValueMove[];
}

/**
 * ETH a deposit address received that no transaction of its own explains (a contract wallet's
 * internal call sends it with no log and no `to`): credited from the address's balance at a block,
 * its sender unknown. Its record's id stands where a hash would; it is no hash, and names no sender.
 */
export const balanceCreditId = (address: string, blockNumber: number) => `balance:${address.toLowerCase()}:${blockNumber}`;
export const isBalanceCredit = (id: string) => id.startsWith('balance:');
/** The sender of a balance credit, as the rules see it: nobody's wallet (never a refund's recipient). */
export const UNKNOWN_SENDER = ZERO_ADDRESS;

/** One transaction the service looked at for a receipt, whatever it decided. */
export interface PaymentRecord {
  /** The transaction's hash; for ETH credited from a deposit address's balance, its `balanceCreditId`. */
  txHash: string;
  token: PayTokenSymbol | null;
  /** The sender; null when not known (a balance credit). */
  payer: string | null;
  /** Atomic units received by the split (0 when none). */
  amount: string;
  /** What the receipt needed in that token then (the quote; after the lock, for ETH, the larger of the quote and the amount at the current price). */
  expected: string | null;
  blockNumber: number;
  outcome: 'paid' | 'overpaid' | 'underpaid' | 'slippage' | 'reverted';
  at: number;
}

export interface PaymentRules {
  confirmations: number;
  /** Tolerance for an ETH payment after its quote's lock when the price fell, in basis points (100 = 1 %); never below the quote. */
  slippageBps: number;
}

export type Judgement =
  | { kind: 'unconfirmed'; confirmations: number; required: number }
  /** `own`: sent by the wallet the page connected for this receipt and reported by the page: the buyer's own failed payment. */
  | { kind: 'reverted'; own: boolean }
  | { kind: 'not_a_payment'; reason: string }
  | { kind: 'before_receipt' }
  | { kind: 'underpaid'; quote: Quote; received: bigint; expected: bigint; payer: string; own: bigint }
  | { kind: 'paid'; quote: Quote; received: bigint; expected: bigint; overpaid: bigint; payer: string; late: boolean; own: bigint }
  | { kind: 'slippage'; quote: Quote; received: bigint; expected: bigint; payer: string; own: bigint };

export interface JudgeInput {
  tx: MinedTransaction;
  head: number;
  /** `payTo`: the receipt's deposit address, where its payments go (lower-case). */
  receipt: { createdAt: number; payTo: string; cents: number; quotes: readonly Quote[] };
  /** What the receipt already received of each token address from earlier underpayments. */
  earlier: Readonly<Record<string, bigint>>;
  rules: PaymentRules;
  tokens: readonly PayToken[];
  /** The feed now, for a payment in ETH after its quote's lock (undefined: not available). */
  priceNow?: FeedPrice;
  /**
   * The wallet the page connected for this receipt: only a transaction of that wallet's can fail the
   * receipt (its late ETH short of the price, for slippage; its reverted payment, only when the page
   * itself reports it, `pageReport`). Anyone else's shortfall is an underpayment and their failed
   * transaction changes nothing.
   */
  connectedWallet?: string;
  pageReport?: boolean;
}

const lower = (text: string) => text.toLowerCase();

/**
 * How far a block's time may fall before an instant of ours and still count as after it. The chain's
 * clock is not ours: a block carries its slot's start, which can precede a transaction sent within
 * that slot; a node's clock can run whole seconds behind (anvil started under load keeps such an
 * offset for good); servers drift. A minute covers these. It lets no earlier payment in: a deposit
 * address is the receipt's alone, and nothing is quoted to it before the receipt exists.
 */
export const CHAIN_CLOCK_SKEW_SECONDS = 60;

/** Was a block (its timestamp in seconds) mined before this instant of ours (ms), beyond the skew? */
export const minedBefore = (blockTimestamp: number, instantMs: number): boolean =>
  blockTimestamp < Math.floor(instantMs / 1000) - CHAIN_CLOCK_SKEW_SECONDS;

/** ERC-20 `transfer(address,uint256)`: its selector, and the recipient word that follows. */
const TRANSFER_SELECTOR = '0xa9059cbb';
const transfersTo = (data: string, recipient: string) =>
  data.startsWith(TRANSFER_SELECTOR) && data.slice(10, 74) === recipient.slice(2).padStart(64, '0');

/**
 * Does this transaction pay this receipt? Every rule of a payment, in order: mined with enough
 * confirmations; succeeded; moved a quoted token (or ETH) to the receipt's deposit address; mined no
 * earlier than the receipt was made (give or take the chain's clock skew); covers the quoted amount
 * (within the lock) or, after it, for ETH, the larger of the quoted amount and the amount at the
 * current price less the slippage tolerance. Less leaves the receipt unpaid, whoever sent it; only the
 * page's own wallet's late ETH fails it for slippage, and only its reverted payment fails it at all.
 */
export const judgePayment = (input: JudgeInput): Judgement => {
  const { tx, head, receipt, rules } = input;
  const confirmations = head - tx.blockNumber + 1;
  if (confirmations < rules.confirmations) return { kind: 'unconfirmed', confirmations: Math.max(0, confirmations), required: rules.confirmations };
  const payTo = lower(receipt.payTo);
  const own = input.connectedWallet !== undefined && lower(input.connectedWallet) === lower(tx.from);
  if (tx.status !== 1) {
    // A failed payment of this receipt: ETH sent to its address, or a quoted token's transfer to it,
    // after the receipt was made. Any other failed transaction is nothing of this receipt's.
    const to = tx.to === null ? null : lower(tx.to);
    const quotedToken = receipt.quotes.some((quote) => quote.tokenAddress !== null && lower(quote.tokenAddress) === to);
    const aimed = to === payTo || (quotedToken && transfersTo(lower(tx.data), payTo));
    if (!aimed) return { kind: 'not_a_payment', reason: 'the transaction reverted and was not a payment to this receipt' };
    return minedBefore(tx.blockTimestamp, receipt.createdAt) ? { kind: 'before_receipt' } : { kind: 'reverted', own: own && input.pageReport === true };
  }
  // The token is the newest quote's whose token reached the address in this transaction.
  const received = new Map<string, bigint>();
  const payerOf = new Map<string, string>();
  for (const move of tx.moves) {
    if (lower(move.to) !== payTo) continue;
    const token = lower(move.token);
    received.set(token, (received.get(token) ?? 0n) + BigInt(move.amount));
    if (!payerOf.has(token)) payerOf.set(token, lower(move.from));
  }
  // The quote paid: the one whose exact amount a transfer carries, else the newest of a token received.
  const newestFirst = [...receipt.quotes].sort((a, b) => b.createdAt - a.createdAt);
  const quote =
    newestFirst.find((candidate) =>
      tx.moves.some((move) => lower(move.to) === payTo && lower(move.token) === lower(candidate.tokenAddress ?? ZERO_ADDRESS) && move.amount === candidate.amount),
    ) ?? newestFirst.find((candidate) => received.has(lower(candidate.tokenAddress ?? ZERO_ADDRESS)));
  if (!quote) return { kind: 'not_a_payment', reason: 'the transaction moved no quoted token to this receipt’s deposit address' };
  if (minedBefore(tx.blockTimestamp, receipt.createdAt)) return { kind: 'before_receipt' };

  const tokenAddress = lower(quote.tokenAddress ?? ZERO_ADDRESS);
  // `own`: what this transaction brought; `total`: with what earlier underpayments brought.
  const brought = received.get(tokenAddress) ?? 0n;
  const total = brought + (input.earlier[tokenAddress] ?? 0n);
  const payer = payerOf.get(tokenAddress) ?? lower(tx.from);
  const quoted = BigInt(quote.amount);
  const late = tx.blockTimestamp * 1000 > quote.expiresAt;
  // After the lock the stablecoins keep their price (the quote, no tolerance).
  if (!late || quote.token !== 'ETH') {
    if (total < quoted) return { kind: 'underpaid', quote, received: total, expected: quoted, payer, own: brought };
    return { kind: 'paid', quote, received: total, expected: quoted, overpaid: total - quoted, payer, late, own: brought };
  }
  // ETH after the lock is measured against the feed now as well. The tolerance is for a price that
  // fell while the buyer paid, never a discount: at least the larger of the quote and the floor (the
  // amount now less the tolerance, rounded up, in the merchant's favour). Owed in full, and the mark
  // past which a payment is overpaid: the larger of the quote and the amount now. Short of it, the
  // page's own wallet's payment fails for slippage (the buyer is told why); anyone else's is an
  // underpayment that later transfers add to, so a stranger's dust changes nothing but a record.
  const token = input.tokens.find((candidate) => candidate.symbol === 'ETH');
  if (!input.priceNow || !token) return { kind: 'slippage', quote, received: total, expected: quoted, payer, own: brought };
  const current = quoteAmount(token, receipt.cents, input.priceNow);
  const floor = (current * BigInt(10_000 - rules.slippageBps) + 9_999n) / 10_000n;
  const least = floor > quoted ? floor : quoted;
  const owed = current > quoted ? current : quoted;
  if (total < least) {
    return own ? { kind: 'slippage', quote, received: total, expected: owed, payer, own: brought } : { kind: 'underpaid', quote, received: total, expected: owed, payer, own: brought };
  }
  return { kind: 'paid', quote, received: total, expected: owed, overpaid: total > owed ? total - owed : 0n, payer, late, own: brought };
};

/**
 * An open deposit address on the watcher's list: whose receipt it is, until when its transfers are
 * looked for (Unix ms), and whether an ETH quote went out for it (ETH sent by a plain transaction or
 * a contract wallet leaves no log: such an address's balance is read).
 */
export interface DepositWatch {
  /** `<wallet>:<receiptId>`, as the ledger names a receipt. */
  owner: string;
  /** The shop's split, where the address sweeps to. */
  split: string;
  until: number;
  eth?: boolean;
}

/**
 * What the payment watcher keeps for the deployment's chain: the next block to scan
 * (`cursor:<chainId>`), the open deposit addresses (`deposits:<chainId>:<shard>`, sixteen documents
 * by the address's first hex digit, so ten thousand open receipts stay well inside a document's size
 * and quotes at once rarely write the same one), and where the refund watcher's walk over merchants
 * goes on (`refund-cursor:<chainId>`).
 */
export interface ChainState {
  id: string;
  /** The first block not yet scanned. */
  nextBlock?: number;
  /** Deposit address → what it is watched for. */
  deposits?: Record<string, DepositWatch>;
  /** The merchant wallet after which the next range's refunds are taken ('' or absent: from the first). */
  refundsAfter?: string;
  updatedAt: number;
}

export const cursorId = (chainId: number) => `cursor:${chainId}`;
/** The sixteen shards of the open deposit addresses: one per first hex digit of the address. */
export const DEPOSIT_SHARDS = [...'0123456789abcdef'];
export const depositShardId = (chainId: number, address: string) => `deposits:${chainId}:${address.toLowerCase().charAt(2)}`;
export const refundCursorId = (chainId: number) => `refund-cursor:${chainId}`;
/** One transaction pays one receipt: its hash is claimed under this id. */
export const paymentTxClaimId = (chainId: number, hash: string) => `payment-tx:${chainId}:${hash.toLowerCase()}`;
