/**
 * The `Chain` port on an EVM chain over JSON-RPC: splits are ERC-1167 clones made by the
 * SplitFactory, payments are ERC-20 `Transfer` logs and the split's own events.
 */
import {
  Contract,
  Interface,
  ZeroAddress,
  dataSlice,
  getAddress,
  isError,
  zeroPadValue,
  type JsonRpcProvider,
  type Log,
  type TransactionReceipt,
} from 'ethers';
import type { FeedBounds, FeedPrice, MinedTransaction, ValueMove } from '../../domain/payment';
import { RangeTooLargeError, type Chain, type ChainMove, type DeployedSplit, type DepositSweep, type SplitPayee, type SplitTransfer } from '../../ports/chain';
import { DependencyUnavailableError } from '../../ports/errors';
import { depositFactoryArtifact, splitArtifact, splitFactoryArtifact } from './artifacts';
import { depositAddress, forwarderImplementation, receiptKey } from './deposit-address';
import { createProvider, createRelayer, type RelayerSigner } from './provider';
import { isRangeRefusal } from './rpc';

/** The chain's RPC could not be reached or did not answer in time; nothing is known about the call's outcome. */
export class ChainUnavailableError extends DependencyUnavailableError {
  constructor(message = 'the chain RPC is unavailable', options?: { cause?: unknown }) {
    super('chain', message);
    if (options?.cause !== undefined) this.cause = options.cause;
    this.name = 'ChainUnavailableError';
  }
}

/** The split contract refused the payee set (the reason is the contract's custom error, e.g. `InvalidBpsTotal`). */
export class InvalidSplitError extends Error {
  constructor(
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`the split contract rejected the payees: ${reason}`, options);
    this.name = 'InvalidSplitError';
  }
}

const ADDRESS = /^0x[0-9a-f]{40}$/;
/** An address as a log topic (32 bytes, left-padded), from any spelling of it; a malformed one is a defect of the caller's. */
const addressTopic = (address: string) => {
  const text = address.toLowerCase();
  if (!ADDRESS.test(text)) throw new RangeError(`not an address: ${address}`);
  return `0x${'0'.repeat(24)}${text.slice(2)}`;
};

/** Addresses one log query names at most (a provider caps a topic list's length or a request's size). */
const ADDRESSES_PER_QUERY = 1_000;

/** A deployment not mined by then is reported as a timeout (chain unavailable) rather than awaited forever. */
const MINE_TIMEOUT_MS = 120_000;

export interface EvmChainOptions {
  rpcUrl: string;
  chainId: number;
  /** Pays the gas of split deployments. */
  relayerPrivateKey: string;
  splitFactory: string;
  /** ERC-20 contracts whose transfers into a split count as payments (USDC, USDT). */
  tokens: string[];
  /** Chainlink ETH/USD AggregatorV3 feed; without it `ethUsdPrice` throws. */
  ethUsdFeed?: string;
  /** The DepositFactory that makes receipts' deposit addresses; without it there are none (`depositAddress` answers undefined). */
  depositFactory?: string;
  /** Share one provider with other adapters; by default the chain makes its own. */
  provider?: JsonRpcProvider;
}

type BlockRange = { fromBlock: number; toBlock: number };

const splitInterface = new Interface(splitArtifact.abi);
const factoryInterface = new Interface(splitFactoryArtifact.abi);
const depositFactoryInterface = new Interface(depositFactoryArtifact.abi);
const erc20Interface = new Interface([
  'event Transfer(address indexed from, address indexed to, uint256 value)',
  'event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)',
  'function balanceOf(address owner) view returns (uint256)',
]);
// Chainlink's AggregatorV3Interface, the part the service reads, and the proxy's current aggregator.
const feedInterface = new Interface([
  'function decimals() view returns (uint8)',
  'function latestRoundData() view returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)',
  'function aggregator() view returns (address)',
]);
// The bounds an OCR aggregator holds its answers to (OffchainAggregator, OCR2Aggregator).
const boundsInterface = new Interface(['function minAnswer() view returns (int192)', 'function maxAnswer() view returns (int192)']);

const topicOf = (iface: Interface, event: string): string => {
  const fragment = iface.getEvent(event);
  if (!fragment) throw new Error(`event ${event} is not in the ABI`);
  return fragment.topicHash;
};

const TRANSFER = topicOf(erc20Interface, 'Transfer');
const AUTHORIZATION_USED = topicOf(erc20Interface, 'AuthorizationUsed');
const PAYMENT_RECEIVED = topicOf(splitInterface, 'PaymentReceived');
const DISTRIBUTED = topicOf(splitInterface, 'Distributed');
const WITHDRAWN = topicOf(splitInterface, 'Withdrawn');
const TOKEN_WITHDRAWN = topicOf(splitInterface, 'TokenWithdrawn');
const SPLIT_CREATED = topicOf(factoryInterface, 'SplitCreated');
const SWEEP_FAILED = topicOf(depositFactoryInterface, 'SweepFailed');

// The factory's calls revert with the split initializer's errors: one ABI decodes both.
const factoryCallInterface = new Interface([
  ...factoryInterface.fragments,
  ...splitInterface.fragments.filter((fragment) => fragment.type === 'error'),
]);

/** The contract's custom error name in a revert, when the revert is one of ours. */
const revertReason = (error: unknown): string | undefined => {
  if (!isError(error, 'CALL_EXCEPTION')) return undefined;
  // Reverts found while estimating gas reach us undecoded (the signer does not know the ABI).
  if (error.revert?.name) return error.revert.name;
  try {
    return factoryCallInterface.parseError(error.data ?? '0x')?.name;
  } catch {
    return undefined;
  }
};

/** ERC-1167 runtime code delegating to `implementation`: what every genuine split holds. */
const cloneCode = (implementation: string) =>
  `0x363d3d373d3d3d363d73${implementation.slice(2).toLowerCase()}5af43d82803e903d91602b57fd5bf3`;

const lower = (address: string) => address.toLowerCase();
/** Validates any spelling of an address (a wrong mixed-case checksum is still a valid lower-case address). */
const checked = (address: string) => getAddress(address.toLowerCase());
/** A call the contract does not answer (no such function, or no contract there): a revert, or no data to decode. */
const notAnswered = (error: unknown) => isError(error, 'CALL_EXCEPTION') || isError(error, 'BAD_DATA');

// Node's socket errors and ethers' transport errors: the call never got an answer.
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
  'EPIPE',
  'UND_ERR_SOCKET',
]);

const isUnavailable = (error: unknown): boolean => {
  if (isError(error, 'TIMEOUT') || isError(error, 'NETWORK_ERROR') || isError(error, 'SERVER_ERROR')) return true;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) return true;
  const cause = (error as { cause?: unknown } | null)?.cause;
  return cause !== undefined && cause !== error && isUnavailable(cause);
};

export class EvmChain implements Chain {
  readonly chainId: number;
  readonly splitFactory: string;
  readonly provider: JsonRpcProvider;
  private readonly relayer: RelayerSigner;
  private readonly factory: Contract;
  private readonly factoryAddress: string;
  private readonly tokens: string[];
  private readonly ownsProvider: boolean;
  private readonly feed?: Contract;
  private feedDecimals?: number;
  /** Bounds by aggregator address (undefined: that aggregator has none). */
  private readonly feedBounds = new Map<string, FeedBounds | undefined>();
  /** False once the feed turned out to name no aggregator (not a Chainlink proxy): not asked again. */
  private feedHasAggregator = true;
  private expectedSplitCode?: Promise<string>;
  private readonly deposits?: { factory: string; implementation: string };

  constructor(options: EvmChainOptions) {
    this.chainId = options.chainId;
    this.ownsProvider = !options.provider;
    this.provider = options.provider ?? createProvider(options.rpcUrl, options.chainId);
    this.relayer = createRelayer(options.relayerPrivateKey, this.provider);
    this.factoryAddress = checked(options.splitFactory);
    this.splitFactory = lower(this.factoryAddress);
    this.factory = new Contract(this.factoryAddress, factoryCallInterface, this.relayer);
    this.tokens = options.tokens.map(checked);
    if (options.ethUsdFeed) this.feed = new Contract(checked(options.ethUsdFeed), feedInterface, this.provider);
    if (options.depositFactory) this.deposits = { factory: lower(checked(options.depositFactory)), implementation: forwarderImplementation(options.depositFactory) };
  }

  depositAddress(split: string, wallet: string, receiptId: string): Promise<string | undefined> {
    if (!this.deposits) return Promise.resolve(undefined);
    const key = receiptKey({ chainId: this.chainId, wallet, receiptId });
    return Promise.resolve(depositAddress({ ...this.deposits, split, receiptKey: key }));
  }

  deploySplit(payees: SplitPayee[]): Promise<DeployedSplit> {
    return this.guard(async () => {
      const accounts = payees.map((payee) => checked(payee.address));
      const bps = payees.map((payee) => payee.bps);
      const address: string = await this.factory.getFunction('predictSplit').staticCall(accounts, bps);
      if ((await this.provider.getCode(address)) !== '0x') return this.existingSplit(address);

      let receipt: TransactionReceipt | null;
      try {
        const tx = await this.factory.getFunction('createSplit').send(accounts, bps);
        receipt = await this.minedReceipt(tx.hash);
      } catch (error) {
        const reason = revertReason(error);
        if (reason) throw new InvalidSplitError(reason, { cause: error });
        throw error;
      }
      const created = receipt.logs.some((log) => log.topics[0] === SPLIT_CREATED && log.topics[1] === zeroPadValue(lower(address), 32));
      // Another deployment of the same payees can land between the code check and ours; the factory then returns it.
      if (!created) return this.existingSplit(address);
      return { address: lower(address), txHash: receipt.hash, blockNumber: receipt.blockNumber, created: true };
    });
  }

  findSplit(payees: SplitPayee[]): Promise<DeployedSplit | undefined> {
    return this.guard(async () => {
      const address: string = await this.factory.getFunction('predictSplit').staticCall(
        payees.map((payee) => checked(payee.address)),
        payees.map((payee) => payee.bps),
      );
      if ((await this.provider.getCode(address)) === '0x') return undefined;
      return this.existingSplit(address);
    });
  }

  readSplit(address: string): Promise<SplitPayee[] | undefined> {
    return this.guard(async () => {
      const split = checked(address);
      const [code, expected] = await Promise.all([this.provider.getCode(split), this.splitCode()]);
      // Only a clone of our implementation pays out what its payees() says; anything else is not a split.
      if (lower(code) !== expected) return undefined;
      const contract = new Contract(split, splitInterface, this.provider);
      const [accounts, bps]: [string[], bigint[]] = await contract.getFunction('payees').staticCall();
      return accounts.map((account, index) => ({ address: lower(account), bps: Number(bps[index]) }));
    });
  }

  splitTransfers(address: string, range: { fromBlock: number; toBlock: number }): Promise<SplitTransfer[]> {
    return this.guard(async () => {
      const split = lower(checked(address));
      const [payments, own] = await Promise.all([
        this.tokens.length === 0
          ? Promise.resolve([])
          : this.provider.getLogs({ ...range, address: this.tokens, topics: [TRANSFER, null, zeroPadValue(split, 32)] }),
        this.provider.getLogs({ ...range, address: split, topics: [[PAYMENT_RECEIVED, DISTRIBUTED, WITHDRAWN, TOKEN_WITHDRAWN]] }),
      ]);
      return [...payments, ...own]
        .filter((log) => !log.removed)
        .map((log) => toTransfer(split, log))
        .sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex);
    });
  }

  transaction(hash: string): Promise<MinedTransaction | 'pending' | undefined> {
    return this.guard(async () => {
      const tx = await this.provider.getTransaction(hash);
      if (!tx) return undefined;
      if (tx.blockNumber === null) return 'pending';
      const receipt = await this.provider.getTransactionReceipt(hash);
      // Mined a moment ago and reorganized away since: as good as not mined yet.
      if (!receipt) return 'pending';
      const block = await this.provider.getBlock(receipt.blockHash);
      if (!block) return 'pending';
      const status = receipt.status === 1 ? 1 : 0;
      const to = tx.to === null ? null : lower(tx.to);
      const moves: ValueMove[] = [];
      if (status === 1 && to !== null && tx.value > 0n) moves.push({ token: ZeroAddress, from: lower(tx.from), to, amount: tx.value.toString(), logIndex: -1 });
      for (const [position, log] of receipt.logs.entries()) {
        // ETH sent straight to a split is the transaction's own value, already counted above.
        if (log.topics[0] === PAYMENT_RECEIVED && lower(log.address) === to) continue;
        const move = this.moveOf(log);
        if (!move) continue;
        // EIP-3009 tokens log AuthorizationUsed(from, nonce) right before the authorization's Transfer.
        const before = receipt.logs[position - 1];
        const authorized =
          before !== undefined &&
          lower(before.address) === move.token &&
          before.topics[0] === AUTHORIZATION_USED &&
          before.topics[1] !== undefined &&
          lower(before.topics[1]) === lower(zeroPadValue(move.from, 32));
        moves.push(authorized ? { ...move, authorizationNonce: lower(before.topics[2]!) } : move);
      }
      return { hash: lower(receipt.hash), status, from: lower(tx.from), to, data: lower(tx.data), blockNumber: receipt.blockNumber, blockTimestamp: block.timestamp, moves };
    });
  }

  paymentsInto(addresses: readonly string[], range: BlockRange): Promise<ChainMove[]> {
    if (addresses.length === 0 || this.tokens.length === 0) return Promise.resolve([]);
    return this.guard(async () => {
      // A topic position given a list matches any of it; a provider takes a list of some length only,
      // so a long one goes as several queries, asked together.
      // Built as text: checksumming and padding 10,000 addresses through the library took over a second a run.
      const topics = [...new Set(addresses.map(addressTopic))];
      const chunks = Array.from({ length: Math.ceil(topics.length / ADDRESSES_PER_QUERY) }, (_, index) => topics.slice(index * ADDRESSES_PER_QUERY, (index + 1) * ADDRESSES_PER_QUERY));
      const logs = await Promise.all(chunks.map((chunk) => this.provider.getLogs({ ...range, address: this.tokens, topics: [TRANSFER, null, chunk] })));
      return this.chainMoves(logs.flat());
    });
  }

  tokenTransfersInto(addresses: readonly string[], range: BlockRange): Promise<ChainMove[]> {
    if (addresses.length === 0) return Promise.resolve([]);
    return this.guard(async () => {
      // No contract named: every token's Transfer into the addresses, in chunks as paymentsInto asks.
      // Built as text: checksumming and padding 10,000 addresses through the library took over a second a run.
      const topics = [...new Set(addresses.map(addressTopic))];
      const chunks = Array.from({ length: Math.ceil(topics.length / ADDRESSES_PER_QUERY) }, (_, index) => topics.slice(index * ADDRESSES_PER_QUERY, (index + 1) * ADDRESSES_PER_QUERY));
      const logs = await Promise.all(chunks.map((chunk) => this.provider.getLogs({ ...range, topics: [TRANSFER, null, chunk] })));
      return logs
        .flat()
        // An ERC-20 Transfer indexes two addresses and carries the amount as its one data word; an
        // ERC-721 one indexes the token id too and carries no data.
        .filter((log) => !log.removed && log.topics.length === 3 && log.data.length === 66)
        .map((log) => ({
          token: lower(log.address),
          from: lower(`0x${log.topics[1]!.slice(26)}`),
          to: lower(`0x${log.topics[2]!.slice(26)}`),
          amount: BigInt(log.data).toString(),
          logIndex: log.index,
          txHash: lower(log.transactionHash),
          blockNumber: log.blockNumber,
        }))
        .sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex);
    });
  }

  ethTransfersTo(addresses: readonly string[], range: BlockRange): Promise<ChainMove[]> {
    if (addresses.length === 0) return Promise.resolve([]);
    return this.guard(async () => {
      const wanted = new Set(addresses.map((address) => lower(checked(address))));
      const numbers = Array.from({ length: range.toBlock - range.fromBlock + 1 }, (_, index) => range.fromBlock + index);
      const blocks = await Promise.all(numbers.map((number) => this.provider.getBlock(number, true)));
      const moves: ChainMove[] = [];
      for (const block of blocks) {
        if (!block) throw new Error('a block of the range is not known to the node yet');
        for (const tx of block.prefetchedTransactions) {
          if (tx.to === null || tx.value === 0n || !wanted.has(lower(tx.to))) continue;
          moves.push({ token: ZeroAddress, from: lower(tx.from), to: lower(tx.to), amount: tx.value.toString(), logIndex: -1, txHash: lower(tx.hash), blockNumber: block.number });
        }
      }
      return moves;
    });
  }

  transfersAmong(senders: readonly string[], recipients: readonly string[], range: BlockRange): Promise<ChainMove[]> {
    if (this.tokens.length === 0 || senders.length === 0 || recipients.length === 0) return Promise.resolve([]);
    return this.guard(async () => {
      // A topic position given a list matches any of it: every sender to every recipient, in one query.
      const topicsOf = (addresses: readonly string[]) => [...new Set(addresses.map((address) => lower(checked(address))))].map((address) => zeroPadValue(address, 32));
      const topics = [TRANSFER, topicsOf(senders), topicsOf(recipients)];
      return this.chainMoves(await this.provider.getLogs({ ...range, address: this.tokens, topics }));
    });
  }

  ethUsdPrice(): Promise<FeedPrice> {
    return this.guard(async () => {
      const feed = this.feed;
      if (!feed) throw new Error('no ETH/USD feed is configured (ETH_USD_FEED_ADDRESS)');
      const [round, decimals, bounds] = await Promise.all([feed.getFunction('latestRoundData').staticCall(), this.decimalsOf(feed), this.boundsOf(feed)]);
      return { answer: round[1] as bigint, decimals, updatedAt: Number(round[3]) * 1000, ...(bounds && { bounds }) };
    });
  }

  balancesOf(holders: readonly string[], tokens: readonly string[], blockTag?: number): Promise<Record<string, Record<string, bigint>>> {
    return this.guard(async () => {
      // Issued together: a remote provider sends them as one JSON-RPC batch.
      const reads = holders.flatMap((holder) =>
        tokens.map(async (token) => {
          const owner = checked(holder);
          const balance = lower(token) === ZeroAddress ? await this.provider.getBalance(owner, blockTag) : await this.erc20BalanceOf(checked(token), owner, blockTag);
          return [lower(holder), lower(token), balance] as const;
        }),
      );
      const balances: Record<string, Record<string, bigint>> = {};
      for (const [holder, token, balance] of await Promise.all(reads)) (balances[holder] ??= {})[token] = balance;
      return balances;
    });
  }

  splitHoldings(split: string, payee: string, tokens: readonly string[], blockTag?: number): Promise<Record<string, { distributable: bigint; credited: bigint }>> {
    return this.guard(async () => {
      const contract = new Contract(checked(split), splitInterface, this.provider);
      const account = checked(payee);
      const overrides = blockTag === undefined ? {} : { blockTag };
      const reads = tokens.map(async (token) => {
        const address = checked(token);
        const [distributable, credited]: [bigint, bigint] = await Promise.all([
          contract.getFunction('distributable').staticCall(address, overrides),
          lower(token) === ZeroAddress
            ? contract.getFunction('credits').staticCall(account, overrides)
            : contract.getFunction('tokenCredits').staticCall(address, account, overrides),
        ]);
        return [lower(token), { distributable, credited }] as const;
      });
      return Object.fromEntries(await Promise.all(reads));
    });
  }

  firstBlockAtOrAfter(timestampMs: number): Promise<number> {
    return this.guard(async () => {
      const seconds = Math.ceil(timestampMs / 1000);
      const timeOf = async (number: number) => {
        const block = await this.provider.getBlock(number);
        if (!block) throw new Error(`block ${number} is not known to the node`);
        return block.timestamp;
      };
      const head = await this.provider.getBlockNumber();
      if ((await timeOf(head)) < seconds) return head + 1;
      // Block timestamps never decrease: the first block at or after the time, by halving the range.
      let low = 0;
      let high = head;
      while (low < high) {
        const middle = Math.floor((low + high) / 2);
        if ((await timeOf(middle)) >= seconds) high = middle;
        else low = middle + 1;
      }
      return low;
    });
  }

  async sweepCall(deposits: readonly DepositSweep[]): Promise<{ to: string; data: string }> {
    return { to: this.depositFactory(), data: depositFactoryInterface.encodeFunctionData('sweepMany', [this.sweepArguments(deposits)]) };
  }

  sweepDeposits(deposits: readonly DepositSweep[]): Promise<{ txHash: string; blockNumber: number; failed: string[] }> {
    return this.guard(async () => {
      const factory = this.depositFactory();
      if (deposits.length === 0) throw new RangeError('a sweep names at least one deposit');
      const contract = new Contract(factory, depositFactoryInterface, this.relayer);
      const sweepMany = contract.getFunction('sweepMany');
      const args = this.sweepArguments(deposits);
      // The factory reverts (InsufficientGas) rather than starve a sweep, so a limit at the estimate's
      // edge could revert where the state moved a little (a split's first balance of a token costs
      // more); gas not used is not paid, so the margin costs nothing.
      const estimate = await sweepMany.estimateGas(args);
      const tx = await sweepMany.send(args, { gasLimit: estimate + estimate / 5n });
      const receipt = await this.minedReceipt(tx.hash);
      const failed = receipt.logs
        .filter((log) => lower(log.address) === factory && log.topics[0] === SWEEP_FAILED && log.topics[1] !== undefined)
        .map((log) => lower(dataSlice(log.topics[1]!, 12)));
      return { txHash: lower(receipt.hash), blockNumber: receipt.blockNumber, failed };
    });
  }

  distribute(split: string, token: string): Promise<{ txHash: string; blockNumber: number }> {
    return this.guard(async () => {
      const contract = new Contract(checked(split), splitInterface, this.relayer);
      const tx = await contract.getFunction('distribute').send(checked(token));
      const receipt = await this.minedReceipt(tx.hash);
      return { txHash: receipt.hash, blockNumber: receipt.blockNumber };
    });
  }

  blockNumber(): Promise<number> {
    return this.guard(() => this.provider.getBlockNumber());
  }

  blockTimestamp(blockNumber: number): Promise<number> {
    return this.guard(async () => {
      const block = await this.provider.getBlock(blockNumber);
      if (!block) throw new Error(`block ${blockNumber} is not known to the node yet`);
      return block.timestamp;
    });
  }

  async relayerBalance(): Promise<bigint> {
    const address = await this.relayer.getAddress();
    return this.guard(() => this.provider.getBalance(address));
  }

  /**
   * The receipt of the relayer's transaction once mined, asked for at the provider's polling interval
   * (at most a second) until MINE_TIMEOUT_MS, not awaited from new blocks as ethers' `wait()` does: a
   * node can answer a just-mined receipt as missing (anvil does, now and then; so does a node behind a
   * load balancer), and a wait that looks again only at the next block waits for good on a chain where
   * none comes. A reverted transaction throws CALL_EXCEPTION and a timeout TIMEOUT, as `wait()` did.
   */
  private async minedReceipt(hash: string): Promise<TransactionReceipt> {
    const deadline = Date.now() + MINE_TIMEOUT_MS;
    const pause = Math.min(this.provider.pollingInterval, 1_000);
    for (;;) {
      const receipt = await this.provider.getTransactionReceipt(hash);
      if (receipt) {
        if (receipt.status === 0) throw Object.assign(new Error(`transaction ${hash} reverted`), { code: 'CALL_EXCEPTION', receipt });
        return receipt;
      }
      if (Date.now() > deadline) throw Object.assign(new Error(`transaction ${hash} was not mined within ${MINE_TIMEOUT_MS} ms`), { code: 'TIMEOUT' });
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }

  /** Stops the provider this chain made (one passed in belongs to whoever passed it). */
  destroy(): void {
    if (this.ownsProvider) this.provider.destroy();
  }

  /** The deposit factory (lower-case); a deployment without one has no deposits to sweep (503, as for a quote: `depositOf`). */
  private depositFactory(): string {
    if (!this.deposits) throw new DependencyUnavailableError('chain', 'deposit addresses are not configured on this deployment (DEPOSIT_FACTORY_ADDRESS)');
    return this.deposits.factory;
  }

  /** `sweepMany`'s `Deposit[]`: each receipt's key derived here, as its deposit address was. */
  private sweepArguments(deposits: readonly DepositSweep[]) {
    return deposits.map((deposit) => [
      checked(deposit.split),
      receiptKey({ chainId: this.chainId, wallet: deposit.wallet, receiptId: deposit.receiptId }),
      deposit.tokens.map(checked),
    ]);
  }

  private splitCode(): Promise<string> {
    this.expectedSplitCode ??= this.factory
      .getFunction('implementation')
      .staticCall()
      .then((implementation: string) => cloneCode(implementation));
    // A failed read (the node was down) must not be remembered.
    this.expectedSplitCode.catch(() => (this.expectedSplitCode = undefined));
    return this.expectedSplitCode;
  }

  private async erc20BalanceOf(token: string, owner: string, blockTag?: number): Promise<bigint> {
    const data = erc20Interface.encodeFunctionData('balanceOf', [owner]);
    const answer = await this.provider.call({ to: token, data, ...(blockTag !== undefined && { blockTag }) });
    return erc20Interface.decodeFunctionResult('balanceOf', answer)[0] as bigint;
  }

  /** A feed's decimals never change: read once. */
  private async decimalsOf(feed: Contract): Promise<number> {
    this.feedDecimals ??= Number(await feed.getFunction('decimals').staticCall());
    return this.feedDecimals;
  }

  /**
   * The bounds of the aggregator the feed (a Chainlink proxy) names now: fixed per aggregator, so read
   * once for each, but the proxy is asked every time, as a new phase brings a new aggregator. A feed
   * that names no aggregator, or one without `minAnswer`/`maxAnswer` (or no contract there), has no
   * bounds: its answers are then judged by their age and sign alone (`isStale`).
   */
  private async boundsOf(feed: Contract): Promise<FeedBounds | undefined> {
    if (!this.feedHasAggregator) return undefined;
    let aggregator: string;
    try {
      aggregator = lower(await feed.getFunction('aggregator').staticCall());
    } catch (error) {
      if (!notAnswered(error)) throw error;
      this.feedHasAggregator = false;
      return undefined;
    }
    if (this.feedBounds.has(aggregator)) return this.feedBounds.get(aggregator);
    const contract = new Contract(aggregator, boundsInterface, this.provider);
    let bounds: FeedBounds | undefined;
    try {
      const [min, max]: [bigint, bigint] = await Promise.all([contract.getFunction('minAnswer').staticCall(), contract.getFunction('maxAnswer').staticCall()]);
      bounds = { min, max };
    } catch (error) {
      if (!notAnswered(error)) throw error;
    }
    this.feedBounds.set(aggregator, bounds);
    return bounds;
  }

  /** A configured token's `Transfer` or a split's `PaymentReceived` as a value move; other logs are not. */
  private moveOf(log: Log): ValueMove | undefined {
    const token = lower(log.address);
    if (log.topics[0] === TRANSFER && log.topics.length === 3 && this.tokens.some((configured) => lower(configured) === token)) {
      const event = erc20Interface.parseLog(log);
      if (!event) return undefined;
      return { token, from: lower(event.args[0]), to: lower(event.args[1]), amount: event.args[2].toString(), logIndex: log.index };
    }
    if (log.topics[0] === PAYMENT_RECEIVED) {
      const event = splitInterface.parseLog(log);
      if (!event) return undefined;
      return { token: ZeroAddress, from: lower(event.args[0]), to: token, amount: event.args[1].toString(), logIndex: log.index };
    }
    return undefined;
  }

  private chainMoves(logs: Log[]): ChainMove[] {
    return logs
      .filter((log) => !log.removed)
      .flatMap((log) => {
        const move = this.moveOf(log);
        return move ? [{ ...move, txHash: log.transactionHash, blockNumber: log.blockNumber }] : [];
      })
      .sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex);
  }

  /** The split exists: find the transaction that created it, from its `SplitCreated` log. */
  private async existingSplit(address: string): Promise<DeployedSplit> {
    const split = new Contract(address, splitInterface, this.provider);
    const createdAt = Number(await split.getFunction('createdAtBlock').staticCall());
    const filter = { address: this.factoryAddress, topics: [SPLIT_CREATED, zeroPadValue(lower(address), 32)] };
    // The split records its creation block, so one block is searched; the whole chain only if that misses
    // (a chain whose block.number is not its own block height, as on Arbitrum).
    let logs = await this.provider.getLogs({ ...filter, fromBlock: createdAt, toBlock: createdAt });
    if (logs.length === 0) logs = await this.provider.getLogs({ ...filter, fromBlock: 0, toBlock: 'latest' });
    const log = logs[0];
    if (!log) throw new Error(`split ${lower(address)} exists but its SplitCreated log was not found`);
    return { address: lower(address), txHash: log.transactionHash, blockNumber: log.blockNumber, created: false };
  }

  private async guard<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      if (isUnavailable(error)) throw new ChainUnavailableError(undefined, { cause: error });
      if (isRangeRefusal(error)) throw new RangeTooLargeError({ cause: error });
      throw error;
    }
  }
}

const toTransfer = (split: string, log: Log): SplitTransfer => {
  const at = { txHash: log.transactionHash, blockNumber: log.blockNumber, logIndex: log.index };
  if (log.topics[0] === TRANSFER) {
    const event = erc20Interface.parseLog(log);
    if (!event) throw new Error(`unreadable Transfer log in ${log.transactionHash}`);
    return { kind: 'payment', token: lower(log.address), from: lower(event.args[0]), to: split, amount: event.args[2].toString(), ...at };
  }
  const event = splitInterface.parseLog(log);
  if (!event) throw new Error(`unreadable split log in ${log.transactionHash}`);
  switch (event.name) {
    case 'PaymentReceived':
      return { kind: 'payment', token: ZeroAddress, from: lower(event.args[0]), to: split, amount: event.args[1].toString(), ...at };
    case 'Distributed':
      return { kind: 'distribution', token: lower(event.args[0]), from: split, to: lower(event.args[1]), amount: event.args[2].toString(), ...at };
    case 'TokenWithdrawn':
      // TokenWithdrawn(token, payee, to, amount): a credited token share (the token had refused the payee) leaving the split.
      return { kind: 'withdrawal', token: lower(event.args[0]), from: split, to: lower(event.args[2]), amount: event.args[3].toString(), ...at };
    default:
      // Withdrawn(payee, to, amount): a credited ETH share leaving the split, at last.
      return { kind: 'withdrawal', token: ZeroAddress, from: split, to: lower(event.args[1]), amount: event.args[2].toString(), ...at };
  }
};
