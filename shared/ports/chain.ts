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
  /** The relayer wallet's native balance (wei): it pays gas for the service's own transactions. */
  relayerBalance(): Promise<bigint>;
  /**
   * A transaction by hash with the value it moved (configured tokens' `Transfer` logs, ETH received
   * by splits): `pending` while not mined, undefined when the node does not know the hash.
   */
  transaction(hash: string): Promise<MinedTransaction | 'pending' | undefined>;
  /** Payments into any of these splits in the range (tokens' `Transfer` logs and splits' `PaymentReceived`), oldest first. */
  paymentsInto(splits: readonly string[], range: { fromBlock: number; toBlock: number }): Promise<ChainMove[]>;
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
}

/** A value move with where it happened. */
export interface ChainMove extends ValueMove {
  txHash: string;
  blockNumber: number;
}
