import { randomBytes } from 'node:crypto';
import { Contract, ContractFactory, NonceManager, Wallet, ZeroAddress, isError, parseEther, type JsonRpcProvider } from 'ethers';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { ANVIL_BUYERS, ANVIL_FEED_OWNER, ANVIL_ONRAMP_SANDBOX, ANVIL_RELAYER, startAnvil } from '../../scripts/local/anvil';
import { BUYER_TOKENS, INITIAL_ETH_USD, deployLocalContracts } from '../../scripts/local/deploy-contracts';
import { setEthUsdPrice, setFeedUpdatedAt } from '../../scripts/local/feed';
import { mockAggregatorArtifact, testUsdcArtifact, testUsdtArtifact } from '../../shared/adapters/evm/artifacts';
import { EvmChain } from '../../shared/adapters/evm/chain';
import { createProvider } from '../../shared/adapters/evm/provider';
import { isStale } from '../../shared/domain/payment';
import type { SplitPayee } from '../../shared/ports/chain';
import { chainForTests } from '../support/chain';
import { testAccounts } from '../support/chain-merchant';

/** The payment side of the chain adapter (transactions, payments into splits, the feed, distribution) on the run's anvil. */
const local = inject('chain');
// Fresh funded wallets as relayer and buyer: no other file running beside this one sends from them.
let relayer: Wallet;
let buyerAddress: string;

let provider: JsonRpcProvider;
let accounts: Awaited<ReturnType<typeof testAccounts>>;
let chain: EvmChain;
let buyer: NonceManager;
let usdc: Contract;
let usdt: Contract;

beforeAll(async () => {
  provider = createProvider(local.rpcUrl, local.chainId);
  accounts = await testAccounts(provider);
  relayer = await accounts.newWallet();
  chain = chainForTests(relayer.privateKey);
  const buyerWallet = await accounts.newWallet();
  buyerAddress = buyerWallet.address.toLowerCase();
  buyer = new NonceManager(buyerWallet);
  usdc = new Contract(local.usdc, testUsdcArtifact.abi, buyer);
  usdt = new Contract(local.usdt, testUsdtArtifact.abi, buyer);
  await (await usdc.getFunction('mint').send(buyerAddress, 1_000_000_000n)).wait();
  await (await usdt.getFunction('mint').send(buyerAddress, 1_000_000_000n)).wait();
});
afterAll(() => {
  chain.destroy();
  provider.destroy();
});

/** Payees nobody has used: their balances start at zero and their split does not exist yet. */
const freshPayees = (bps = [9000, 700, 300]): SplitPayee[] =>
  bps.map((share) => ({ address: Wallet.createRandom().address.toLowerCase(), bps: share }));

const newSplit = async (payees = freshPayees()) => (await chain.deploySplit(payees)).address;

const mined = async (sent: Promise<{ wait(): Promise<{ hash: string; blockNumber: number } | null> }>) => {
  const receipt = await (await sent).wait();
  if (!receipt) throw new Error('not mined');
  return receipt;
};

const payToken = (token: Contract, to: string, amount: bigint) => mined(token.getFunction('transfer').send(to, amount));
const payEth = (to: string, value: bigint) => mined(buyer.sendTransaction({ to, value }));

/** The local feed's aggregator bounds (MockAggregatorV3's minAnswer and maxAnswer). */
const MOCK_BOUNDS = { min: 1n, max: 100_000_000_000_000n };

describe('the ETH/USD feed', () => {
  it('answers what setEthUsdPrice set, with the feed decimals, its update time in ms and its bounds; a stale time as set', async () => {
    const hash = await setEthUsdPrice(local.rpcUrl, local.ethUsdFeed, '3120.55');
    const block = await provider.getBlock((await provider.getTransactionReceipt(hash))!.blockNumber);
    expect(await chain.ethUsdPrice()).toEqual({ answer: 312_055_000_000n, decimals: 8, updatedAt: block!.timestamp * 1000, bounds: MOCK_BOUNDS });

    const hourAgo = block!.timestamp - 3_600;
    await setFeedUpdatedAt(local.rpcUrl, local.ethUsdFeed, hourAgo);
    expect(await chain.ethUsdPrice()).toEqual({ answer: 312_055_000_000n, decimals: 8, updatedAt: hourAgo * 1000, bounds: MOCK_BOUNDS });

    // A new answer is fresh again (and leaves the run's feed usable for other files).
    await setEthUsdPrice(local.rpcUrl, local.ethUsdFeed, 3000);
    const fresh = await chain.ethUsdPrice();
    expect(fresh.answer).toBe(INITIAL_ETH_USD);
    expect(fresh.updatedAt).toBeGreaterThan(hourAgo * 1000);
  });

  describe('bounds', () => {
    // A feed of this test's own: its answers go to the bounds, which no other file may see.
    let feed: Contract;
    let feedChain: EvmChain;
    const set = async (method: string, ...args: unknown[]) => (await feed.getFunction(method).send(...args)).wait();
    const refused = async () => {
      const price = await feedChain.ethUsdPrice();
      return isStale(price, price.updatedAt, 3_600_000);
    };
    beforeAll(async () => {
      feed = (await new ContractFactory(mockAggregatorArtifact.abi, mockAggregatorArtifact.bytecode, await accounts.newWallet()).deploy(3000n * 10n ** 8n)) as Contract;
      await feed.waitForDeployment();
      feedChain = new EvmChain({ rpcUrl: local.rpcUrl, chainId: local.chainId, relayerPrivateKey: relayer.privateKey, splitFactory: local.splitFactory, tokens: [], ethUsdFeed: await feed.getAddress(), provider });
    });

    it('names the aggregator’s minAnswer and maxAnswer; an answer at either is no price', async () => {
      expect(await feedChain.ethUsdPrice()).toMatchObject({ answer: 300_000_000_000n, bounds: MOCK_BOUNDS });
      expect(await refused()).toBe(false);
      await set('setAnswer', MOCK_BOUNDS.min);
      expect(await feedChain.ethUsdPrice()).toMatchObject({ answer: MOCK_BOUNDS.min, bounds: MOCK_BOUNDS });
      expect(await refused()).toBe(true);
      await set('setAnswer', MOCK_BOUNDS.max);
      expect(await refused()).toBe(true);
      await set('setAnswer', MOCK_BOUNDS.max - 1n);
      expect(await refused()).toBe(false);
    });

    it('names none when the aggregator has no bounds (or is no contract): the answer is judged by its age alone', async () => {
      await set('setAnswer', MOCK_BOUNDS.max);
      try {
        for (const aggregator of [local.usdc, ZeroAddress]) {
          await set('setAggregator', aggregator);
          const price = await feedChain.ethUsdPrice();
          expect(price.answer).toBe(MOCK_BOUNDS.max);
          expect(price).not.toHaveProperty('bounds');
          expect(await refused()).toBe(false);
        }
      } finally {
        // Bounds follow the aggregator the feed names now, not the one read first.
        await set('setAggregator', await feed.getAddress());
      }
      expect(await feedChain.ethUsdPrice()).toMatchObject({ bounds: MOCK_BOUNDS });
      expect(await refused()).toBe(true);
    });
  });

  it('is refused clearly when no feed is configured', async () => {
    const withoutFeed = new EvmChain({ rpcUrl: local.rpcUrl, chainId: local.chainId, relayerPrivateKey: relayer.privateKey, splitFactory: local.splitFactory, tokens: [local.usdc], provider });
    await expect(withoutFeed.ethUsdPrice()).rejects.toThrow(/no ETH\/USD feed is configured/);
  });
});

describe('transaction', () => {
  it('a USDC transfer to a split: the Transfer log as a move', async () => {
    const split = await newSplit();
    const receipt = await payToken(usdc, split, 2_500_000n);
    const block = await provider.getBlock(receipt.blockNumber);
    expect(await chain.transaction(receipt.hash)).toEqual({
      hash: receipt.hash,
      status: 1,
      from: buyerAddress,
      to: local.usdc,
      // transfer(split, 2500000): the call, as the rules read a failed one
      data: `0xa9059cbb${split.slice(2).padStart(64, '0')}${(2_500_000).toString(16).padStart(64, '0')}`,
      blockNumber: receipt.blockNumber,
      blockTimestamp: block!.timestamp,
      moves: [{ token: local.usdc, from: buyerAddress, to: split, amount: '2500000', logIndex: 0 }],
    });
  });

  it('an ETH transfer to a split: the value once (the split’s own PaymentReceived log is the same ETH)', async () => {
    const split = await newSplit();
    const receipt = await payEth(split, parseEther('0.25'));
    expect(await chain.transaction(receipt.hash)).toMatchObject({
      status: 1,
      from: buyerAddress,
      to: split,
      moves: [{ token: ZeroAddress, from: buyerAddress, to: split, amount: parseEther('0.25').toString(), logIndex: -1 }],
    });
  });

  it('ETH reaching a split inside another contract’s call: the split’s PaymentReceived log', async () => {
    // A split paying another split: the inner one receives ETH from the outer one's distribute().
    const inner = await newSplit();
    const outer = await newSplit([{ address: inner, bps: 6000 }, ...freshPayees([4000])]);
    await payEth(outer, 1_000_000n);
    const { txHash } = await chain.distribute(outer, ZeroAddress);
    const tx = await chain.transaction(txHash);
    expect(tx).toMatchObject({ status: 1, to: outer });
    expect(tx !== 'pending' && tx?.moves).toEqual([{ token: ZeroAddress, from: outer, to: inner, amount: '600000', logIndex: expect.any(Number) }]);
  });

  it('a reverted transfer: status 0 and no moves', async () => {
    const split = await newSplit();
    // A fixed gas limit skips the estimate, so the transfer is mined and reverts on chain.
    const sent = await usdc.getFunction('transfer').send(split, 10n ** 30n, { gasLimit: 100_000 });
    const failed = await sent.wait().catch((error: unknown) => error);
    expect(isError(failed, 'CALL_EXCEPTION')).toBe(true);
    expect(await chain.transaction(sent.hash)).toMatchObject({ hash: sent.hash, status: 0, from: buyerAddress, to: local.usdc, moves: [] });
  });

  it('an unknown hash: undefined', async () => {
    expect(await chain.transaction(`0x${'ab'.repeat(32)}`)).toBeUndefined();
  });
});

describe('paymentsInto and ethTransfersTo', () => {
  it('finds token transfers into any of the addresses in the range (logs), ETH sent to them (the range’s transactions), oldest first, and nothing else', async () => {
    const [first, second, other] = await Promise.all([newSplit(), newSplit(), newSplit()]);
    const usdcIn = await payToken(usdc, first, 1_000_000n);
    const ethIn = await payEth(second, 123_456n);
    const usdtIn = await payToken(usdt, second, 2_000_000n);
    await payToken(usdc, other, 5_000_000n);
    const range = { fromBlock: usdcIn.blockNumber, toBlock: usdtIn.blockNumber };

    const at = (receipt: { hash: string; blockNumber: number }, logIndex: number) => ({ txHash: receipt.hash, blockNumber: receipt.blockNumber, logIndex });
    expect(await chain.paymentsInto([first, second], range)).toEqual([
      { token: local.usdc, from: buyerAddress, to: first, amount: '1000000', ...at(usdcIn, 0) },
      { token: local.usdt, from: buyerAddress, to: second, amount: '2000000', ...at(usdtIn, 0) },
    ]);
    // ETH leaves no log: the transaction's own value, its log index -1.
    expect(await chain.ethTransfersTo([first, second], range)).toEqual([{ token: ZeroAddress, from: buyerAddress, to: second, amount: '123456', txHash: ethIn.hash.toLowerCase(), blockNumber: ethIn.blockNumber, logIndex: -1 }]);
    expect(await chain.ethTransfersTo([first], range)).toEqual([]);
    // Nothing before the first payment; nothing named, nothing asked.
    expect(await chain.paymentsInto([first, second], { fromBlock: 0, toBlock: usdcIn.blockNumber - 1 })).toEqual([]);
    expect(await chain.paymentsInto([], range)).toEqual([]);
    expect(await chain.ethTransfersTo([], range)).toEqual([]);
  });

  it('names any number of addresses: a long list goes as several log queries', async () => {
    const target = Wallet.createRandom().address.toLowerCase();
    const paid = await payToken(usdc, target, 7n);
    const many = [...Array.from({ length: 2_500 }, () => `0x${randomBytes(20).toString('hex')}`), target];
    expect(await chain.paymentsInto(many, { fromBlock: paid.blockNumber, toBlock: paid.blockNumber })).toEqual([
      { token: local.usdc, from: buyerAddress, to: target, amount: '7', txHash: paid.hash, blockNumber: paid.blockNumber, logIndex: 0 },
    ]);
  });
});

describe('distribute', () => {
  it('has the relayer pay the split’s USDC out to its payees; transfersAmong finds each share, in one log query', async () => {
    const payees = freshPayees();
    const split = await newSplit(payees);
    await payToken(usdc, split, 1_000_001n);
    const { txHash, blockNumber } = await chain.distribute(split, local.usdc);
    expect((await provider.getTransactionReceipt(txHash))?.from.toLowerCase()).toBe(relayer.address.toLowerCase());

    const balanceOf = (holder: string) => usdc.getFunction('balanceOf').staticCall(holder) as Promise<bigint>;
    expect(await Promise.all([...payees.map((payee) => balanceOf(payee.address)), balanceOf(split)])).toEqual([900_001n, 70_000n, 30_000n, 0n]);
    const range = { fromBlock: blockNumber, toBlock: blockNumber };
    const getLogs = vi.spyOn(chain.provider, 'getLogs');
    try {
      expect(await chain.transfersAmong([split], [payees[1]!.address], range)).toEqual([
        { token: local.usdc, from: split, to: payees[1]!.address, amount: '70000', txHash, blockNumber, logIndex: expect.any(Number) },
      ]);
      expect(getLogs).toHaveBeenCalledTimes(1);
      // Any named sender to any named recipient, oldest first: the caller pairs them.
      const all = await chain.transfersAmong([split, Wallet.createRandom().address], [...payees.map((payee) => payee.address), buyerAddress], range);
      expect(all.map((move) => [move.to, move.amount])).toEqual([
        [payees[0]!.address, '900001'],
        [payees[1]!.address, '70000'],
        [payees[2]!.address, '30000'],
      ]);
      expect(getLogs).toHaveBeenCalledTimes(2);
      expect(await chain.transfersAmong([payees[1]!.address], [split], range)).toEqual([]);
      // Nobody named: nothing is asked.
      expect(await chain.transfersAmong([], [split], range)).toEqual([]);
      expect(await chain.transfersAmong([split], [], range)).toEqual([]);
      expect(getLogs).toHaveBeenCalledTimes(3);
    } finally {
      getLogs.mockRestore();
    }
  });
});

describe('the local chain’s buyers', () => {
  it('are funded once (and the sandbox on-ramp with them): a second deployment mints nothing, a buyer who spent is topped up to 10,000 again', async () => {
    // A chain of this test's own: the run's buyers spend while other files run.
    const anvil = await startAnvil();
    const own = createProvider(anvil.rpcUrl, anvil.chainId);
    try {
      const contracts = await deployLocalContracts(anvil.rpcUrl, ANVIL_RELAYER.privateKey);
      const tokens = [contracts.usdc, contracts.usdt].map((address) => new Contract(address, testUsdcArtifact.abi, own));
      const holdings = () =>
        Promise.all(tokens.flatMap((token) => ANVIL_BUYERS.map((account) => token.getFunction('balanceOf').staticCall(account.address) as Promise<bigint>)));
      const supplies = () => Promise.all(tokens.map((token) => token.getFunction('totalSupply').staticCall() as Promise<bigint>));
      expect(await holdings()).toEqual(Array(10).fill(BUYER_TOKENS));
      const sent = await own.getTransactionCount(ANVIL_FEED_OWNER.address);

      expect(await deployLocalContracts(anvil.rpcUrl, ANVIL_RELAYER.privateKey)).toEqual(contracts);
      expect(await own.getTransactionCount(ANVIL_FEED_OWNER.address)).toBe(sent);
      // Five buyers and the sandbox on-ramp's account, which has its gas too.
      expect(await supplies()).toEqual([6n * BUYER_TOKENS, 6n * BUYER_TOKENS]);
      expect(await own.getBalance(ANVIL_ONRAMP_SANDBOX.address)).toBeGreaterThan(0n);

      const spender = new Contract(contracts.usdc, testUsdcArtifact.abi, new Wallet(ANVIL_BUYERS[0]!.privateKey, own));
      await (await spender.getFunction('transfer').send(Wallet.createRandom().address, 1_500_000n)).wait();
      await deployLocalContracts(anvil.rpcUrl, ANVIL_RELAYER.privateKey);
      expect(await holdings()).toEqual(Array(10).fill(BUYER_TOKENS));
      expect(await supplies()).toEqual([6n * BUYER_TOKENS + 1_500_000n, 6n * BUYER_TOKENS]);

      const feedChain = new EvmChain({ rpcUrl: anvil.rpcUrl, chainId: anvil.chainId, relayerPrivateKey: ANVIL_RELAYER.privateKey, splitFactory: contracts.splitFactory, tokens: [], ethUsdFeed: contracts.ethUsdFeed, provider: own });
      expect((await feedChain.ethUsdPrice()).answer).toBe(INITIAL_ETH_USD);
    } finally {
      own.destroy();
      await anvil.close();
    }
  });
});
