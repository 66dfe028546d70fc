/** The EVM chain as the service uses it: split contracts and the payments around them. */
import type { SplitRole } from '../domain/merchant';
import type { FeedPrice, MinedTransaction, ValueMove } from '../domain/payment';

export type { SplitRole };

export interface SplitPayee {
  /** Lower-case 0x address. */
  address: string;
  /** Basis points; a split's payees sum to 10000. */
  bps: number;
}

export interface DeployedSplit {
  /** Lower-case 0x address of the split (a minimal clone at a deterministic address). */
  address: string;
  /** The deployment transaction; for a split that already existed, the one that created it. */
  txHash: string;
  blockNumber: number;
  /** False when a split for exactly these payees already existed (nothing was sent). */
  created: boolean;
}

export interface SplitTransfer {
  /** `withdrawal`: a share credited earlier (its payee had refused it) leaving the split, not a distribution. */
  kind: 'payment' | 'distribution' | 'withdrawal';
  /** Token contract, lower-case; the zero address for ETH. */
  token: string;
  from: string;
  to: string;
  /** Atomic units as a decimal string (uint256 does not fit a JSON number). */
  amount: string;
  txHash: string;
  blockNumber: number;
  logIndex: number;
}

export interface Chain {
  readonly chainId: number;
  /** The split factory (lower-case): a merchant's own wallet may call its permissionless `createSplit`. */
  readonly splitFactory: string;
  /** Deploys the split for these payees (merchant first, who also gets the rounding remainder), or finds it. */
  deploySplit(payees: SplitPayee[]): Promise<DeployedSplit>;
  /** The payees recorded on chain, or undefined when there is no split contract at the address. */
  readSplit(address: string): Promise<SplitPayee[] | undefined>;
  /**
   * The split the factory made for exactly these payees (merchant first), whoever sent the
   * transaction, with the transaction that created it; undefined while there is none.
   */
  findSplit(payees: SplitPayee[]): Promise<DeployedSplit | undefined>;
  /** Payments into the split (ETH and the configured tokens) and distributions out of it, oldest first. */
  splitTransfers(address: string, range: { fromBlock: number; toBlock: number }): Promise<SplitTransfer[]>;
  blockNumber(): Promise<number>;
  /** A block's timestamp (Unix seconds), as the block carries it. */
  blockTimestamp(blockNumber: number): Promise<number>;
  /** The relayer wallet's native balance (wei): it pays gas for the service's own transactions. */
  relayerBalance(): Promise<bigint>;
  /**
   * A transaction by hash with the value it moved (configured tokens' `Transfer` logs, ETH received
   * by splits): `pending` while not mined, undefined when the node does not know the hash.
   */
  transaction(hash: string): Promise<MinedTransaction | 'pending' | undefined>;
  /**
   * A receipt's deposit address (lower-case): the DepositFactory's CREATE2 address for the shop's
   * split and the receipt, computed without a call; undefined where no deposit factory is configured.
   */
  depositAddress(split: string, wallet: string, receiptId: string): Promise<string | undefined>;
  /** Configured-token transfers into any of these addresses in the range (`Transfer` logs), oldest first; however many are named. */
  paymentsInto(addresses: readonly string[], range: { fromBlock: number; toBlock: number }): Promise<ChainMove[]>;
  /**
   * ERC-20 `Transfer` logs of any token contract, configured or not, into any of these addresses in the
   * range, oldest first; however many are named. What reached a split or a deposit address, a token
   * the shop does not accept included (its `token` is whatever contract logged it). An ERC-721
   * transfer (the same event, its token id indexed) is no such transfer and is left out.
   */
  tokenTransfersInto(addresses: readonly string[], range: { fromBlock: number; toBlock: number }): Promise<ChainMove[]>;
  /**
   * ETH sent to any of these addresses by a transaction of its own in the range (its `to` and value;
   * such a transfer leaves no log), read from the range's blocks: asked only where a balance rose.
   * ETH a contract sent on (a contract wallet's internal call) is not among them.
   */
  ethTransfersTo(addresses: readonly string[], range: { fromBlock: number; toBlock: number }): Promise<ChainMove[]>;
  /**
   * Configured-token transfers from any of these senders to any of these recipients in the range
   * (refunds), oldest first: one log query however many are named, so the caller pairs senders and
   * recipients itself. None named: none, and nothing asked.
   */
  transfersAmong(senders: readonly string[], recipients: readonly string[], range: { fromBlock: number; toBlock: number }): Promise<ChainMove[]>;
  /** The ETH/USD feed's latest answer (Chainlink `AggregatorV3.latestRoundData`). */
  ethUsdPrice(): Promise<FeedPrice>;
  /**
   * Balances (atomic units) of each holder in each token (the zero address: ETH) at one block (default:
   * the latest), read together: `[holder][token]`, lower-case keys.
   */
  balancesOf(holders: readonly string[], tokens: readonly string[], blockTag?: number): Promise<Record<string, Record<string, bigint>>>;
  /**
   * Per token (lower-case key), what the split would hand out now (`distributable`: every payee's part,
   * credits excluded) and what it already owes `payee` (`credited`: a share it could not be paid, to pull).
   */
  splitHoldings(split: string, payee: string, tokens: readonly string[], blockTag?: number): Promise<Record<string, { distributable: bigint; credited: bigint }>>;
  /** The first block mined at or after `timestampMs` (Unix ms); the head's number + 1 when none is yet. */
  firstBlockAtOrAfter(timestampMs: number): Promise<number>;
  /** Has the relayer call `distribute(token)` on the split (token: zero address for ETH); resolves once mined. */
  distribute(split: string, token: string): Promise<{ txHash: string; blockNumber: number }>;
  /**
   * Has the relayer send one `DepositFactory.sweepMany` for these deposits (each forwarder deployed on
   * first use, then `tokens` swept to its split; the zero address: ETH); resolves once mined. `failed`:
   * the deposit addresses (lower-case) whose sweep the factory reported with `SweepFailed` (their funds
   * stayed). Throws where no deposit factory is configured.
   */
  sweepDeposits(deposits: readonly DepositSweep[]): Promise<{ txHash: string; blockNumber: number; failed: string[] }>;
  /**
   * The same `sweepMany` as a call anyone's wallet can send (`to`: the factory, `data`: the calldata),
   * computed without a call: the merchant's own wallet sweeps its deposits and pays the gas. Throws
   * where no deposit factory is configured.
   */
  sweepCall(deposits: readonly DepositSweep[]): Promise<{ to: string; data: string }>;
}

/** A receipt's deposit address to sweep, named as the factory names it: the split and the receipt (its key follows). */
export interface DepositSweep {
  split: string;
  /** The shop's wallet and the receipt's id: the receipt key (`receiptKey`) is derived from them with the chain id. */
  wallet: string;
  receiptId: string;
  /** Token contracts to sweep, the zero address for ETH; none: the forwarder is deployed only. */
  tokens: readonly string[];
}

/** A value move with where it happened. */
export interface ChainMove extends ValueMove {
  txHash: string;
  blockNumber: number;
}

/**
 * The node refused a log query for its size (too many blocks, or too many logs in them): the same
 * question over a narrower range may be answered. Not an outage.
 */
export class RangeTooLargeError extends Error {
  constructor(options?: { cause?: unknown }) {
    super('the chain node refused the log query for its block range or result size', options);
    this.name = 'RangeTooLargeError';
  }
}
