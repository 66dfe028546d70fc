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

/** What the buyer pays, fixed for the lock: the amount is unique among the split's open quotes of that token. */
export interface Quote {
  quoteId: string;
  token: PayTokenSymbol;
  /** The token contract, lower-case; null for ETH. */
  tokenAddress: string | null;
  chainId: number;
  /** The merchant's split, lower-case. */
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

/** How many distinct tags a quote amount can carry (each below one cent). */
export const TAG_SLOTS = 9_999;

const pow10 = (n: number) => 10n ** BigInt(n);

/** Atomic units per cent of USD for a token at a price (`answer` / 10^decimals USD per token); rounded up. */
const unitsPerCent = (decimals: number, price: { answer: bigint; decimals: number }): bigint => {
  const numerator = pow10(decimals) * pow10(price.decimals);
  const denominator = 100n * price.answer;
  return (numerator + denominator - 1n) / denominator;
};

const STABLE_PRICE = { answer: 1n, decimals: 0 };

/**
 * The atomic amount for `cents` of USD, before the tag: the stablecoins count 1:1; ETH at the feed's
 * price, rounded up so the merchant never receives less than the total.
 */
export const baseAmount = (token: PayToken, cents: number, price?: FeedPrice): bigint => {
  if (!Number.isSafeInteger(cents) || cents < 0) throw new RangeError('cents must be a non-negative integer');
  if (token.symbol !== 'ETH') return BigInt(cents) * pow10(token.decimals - 2);
  if (!price || price.answer <= 0n) throw new RangeError('ETH needs a positive feed price');
  const numerator = BigInt(cents) * pow10(token.decimals) * pow10(price.decimals);
  const denominator = 100n * price.answer;
  return (numerator + denominator - 1n) / denominator;
};

/**
 * The unit of a quote's tag: `TAG_SLOTS` tags together stay below one cent, so the tag never costs
 * the buyer a cent and still tells apart up to 9,999 open quotes of one total.
 */
export const tagUnit = (token: PayToken, price?: FeedPrice): bigint => {
  const perCent = unitsPerCent(token.decimals, token.symbol === 'ETH' ? price! : STABLE_PRICE);
  const unit = perCent / BigInt(TAG_SLOTS + 1);
  return unit > 0n ? unit : 1n;
};

/** The quoted amount with tag number `slot` (1 … TAG_SLOTS). */
export const taggedAmount = (token: PayToken, cents: number, slot: number, price?: FeedPrice): bigint => {
  if (!Number.isInteger(slot) || slot < 1 || slot > TAG_SLOTS) throw new RangeError(`slot must be 1–${TAG_SLOTS}`);
  return baseAmount(token, cents, price) + BigInt(slot) * tagUnit(token, price);
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

/** One transaction the service looked at for a receipt, whatever it decided. */
export interface PaymentRecord {
  txHash: string;
  token: PayTokenSymbol | null;
  payer: string;
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
  | { kind: 'reverted' }
  | { kind: 'not_a_payment'; reason: string }
  | { kind: 'before_receipt' }
  | { kind: 'underpaid'; quote: Quote; received: bigint; expected: bigint; payer: string; own: bigint }
  | { kind: 'paid'; quote: Quote; received: bigint; expected: bigint; overpaid: bigint; payer: string; late: boolean; own: bigint }
  | { kind: 'slippage'; quote: Quote; received: bigint; expected: bigint; payer: string; own: bigint };

export interface JudgeInput {
  tx: MinedTransaction;
  head: number;
  receipt: { createdAt: number; split: string; cents: number; quotes: readonly Quote[] };
  /** What the receipt already received of each token address from earlier underpayments. */
  earlier: Readonly<Record<string, bigint>>;
  rules: PaymentRules;
  tokens: readonly PayToken[];
  /** The feed now, for a payment in ETH after its quote's lock (undefined: not available). */
  priceNow?: FeedPrice;
}

const lower = (text: string) => text.toLowerCase();

/**
 * How far a block's time may fall before an instant of ours and still count as after it. The chain's
 * clock is not ours: a block carries its slot's start, which can precede a transaction sent within
 * that slot; a node's clock can run whole seconds behind (anvil started under load keeps such an
 * offset for good); servers drift. A minute covers these. It lets no earlier payment in: a quote's
 * amount stays claimed for the lock plus the receipt's expiry, far longer, and a hash counts once.
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
 * confirmations; succeeded; moved a quoted token (or ETH) to the receipt's split; mined no earlier
 * than the receipt was made (give or take the chain's clock skew); covers the quoted amount (within
 * the lock) or, after it, for ETH, the larger of the quoted amount and the amount at the current
 * price less the slippage tolerance. Less than quoted leaves the receipt unpaid.
 */
export const judgePayment = (input: JudgeInput): Judgement => {
  const { tx, head, receipt, rules } = input;
  const confirmations = head - tx.blockNumber + 1;
  if (confirmations < rules.confirmations) return { kind: 'unconfirmed', confirmations: Math.max(0, confirmations), required: rules.confirmations };
  const split = lower(receipt.split);
  if (tx.status !== 1) {
    // A failed payment of this receipt: ETH sent to its split, or a quoted token's transfer to it,
    // after the receipt was made. Any other failed transaction is nothing of this receipt's.
    const to = tx.to === null ? null : lower(tx.to);
    const quotedToken = receipt.quotes.some((quote) => quote.tokenAddress !== null && lower(quote.tokenAddress) === to);
    const aimed = to === split || (quotedToken && transfersTo(lower(tx.data), split));
    if (!aimed) return { kind: 'not_a_payment', reason: 'the transaction reverted and was not a payment to this receipt' };
    return minedBefore(tx.blockTimestamp, receipt.createdAt) ? { kind: 'before_receipt' } : { kind: 'reverted' };
  }
  // The token is the newest quote's whose token reached the split in this transaction.
  const received = new Map<string, bigint>();
  const payerOf = new Map<string, string>();
  for (const move of tx.moves) {
    if (lower(move.to) !== split) continue;
    const token = lower(move.token);
    received.set(token, (received.get(token) ?? 0n) + BigInt(move.amount));
    if (!payerOf.has(token)) payerOf.set(token, lower(move.from));
  }
  // The quote paid: the one whose exact amount a transfer carries, else the newest of a token received.
  const newestFirst = [...receipt.quotes].sort((a, b) => b.createdAt - a.createdAt);
  const quote =
    newestFirst.find((candidate) =>
      tx.moves.some((move) => lower(move.to) === split && lower(move.token) === lower(candidate.tokenAddress ?? ZERO_ADDRESS) && move.amount === candidate.amount),
    ) ?? newestFirst.find((candidate) => received.has(lower(candidate.tokenAddress ?? ZERO_ADDRESS)));
  if (!quote) return { kind: 'not_a_payment', reason: 'the transaction moved no quoted token to this receipt’s split' };
  if (minedBefore(tx.blockTimestamp, receipt.createdAt)) return { kind: 'before_receipt' };

  const tokenAddress = lower(quote.tokenAddress ?? ZERO_ADDRESS);
  // `own`: what this transaction brought; `total`: with what earlier underpayments brought.
  const own = received.get(tokenAddress) ?? 0n;
  const total = own + (input.earlier[tokenAddress] ?? 0n);
  const payer = payerOf.get(tokenAddress) ?? lower(tx.from);
  const quoted = BigInt(quote.amount);
  const late = tx.blockTimestamp * 1000 > quote.expiresAt;
  if (!late) {
    if (total < quoted) return { kind: 'underpaid', quote, received: total, expected: quoted, payer, own };
    return { kind: 'paid', quote, received: total, expected: quoted, overpaid: total - quoted, payer, late, own };
  }
  // After the lock: the stablecoins keep their price (the quote, no tolerance); ETH is measured
  // against the feed now as well. The tolerance is for a price that fell while the buyer paid, never
  // a discount: at least the larger of the quote and the floor (the amount now less the tolerance,
  // rounded up, in the merchant's favour). Owed in full, and the mark past which a payment is
  // overpaid: the larger of the quote and the amount now.
  if (quote.token !== 'ETH') {
    if (total < quoted) return { kind: 'underpaid', quote, received: total, expected: quoted, payer, own };
    return { kind: 'paid', quote, received: total, expected: quoted, overpaid: total - quoted, payer, late, own };
  }
  const token = input.tokens.find((candidate) => candidate.symbol === 'ETH');
  if (!input.priceNow || !token) return { kind: 'slippage', quote, received: total, expected: quoted, payer, own };
  const current = baseAmount(token, receipt.cents, input.priceNow);
  const floor = (current * BigInt(10_000 - rules.slippageBps) + 9_999n) / 10_000n;
  const least = floor > quoted ? floor : quoted;
  const owed = current > quoted ? current : quoted;
  if (total < least) return { kind: 'slippage', quote, received: total, expected: owed, payer, own };
  return { kind: 'paid', quote, received: total, expected: owed, overpaid: total > owed ? total - owed : 0n, payer, late, own };
};

/**
 * What the payment watcher keeps for the deployment's chain, one document each: the next block to
 * scan (`cursor:<chainId>`), the splits with quotes that may still be paid (`watchlist:<chainId>`),
 * and where the refund watcher's walk over merchants goes on (`refund-cursor:<chainId>`).
 */
export interface ChainState {
  id: string;
  /** The first block not yet scanned. */
  nextBlock?: number;
  /** Split address → until when its transfers are matched to receipts (Unix ms). */
  splits?: Record<string, number>;
  /** The merchant wallet after which the next range's refunds are taken ('' or absent: from the first). */
  refundsAfter?: string;
  updatedAt: number;
}

export const cursorId = (chainId: number) => `cursor:${chainId}`;
export const watchlistId = (chainId: number) => `watchlist:${chainId}`;
export const refundCursorId = (chainId: number) => `refund-cursor:${chainId}`;
/** One transaction pays one receipt: its hash is claimed under this id. */
export const paymentTxClaimId = (chainId: number, hash: string) => `payment-tx:${chainId}:${hash.toLowerCase()}`;
/** An open quote's exact amount, claimed so that a transfer of that amount names one receipt. */
export const quoteAmountClaimId = (chainId: number, split: string, tokenAddress: string, amount: string) =>
  `quote-amount:${chainId}:${split.toLowerCase()}:${tokenAddress.toLowerCase()}:${amount}`;
