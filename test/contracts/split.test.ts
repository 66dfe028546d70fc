import { Contract, ContractFactory, Interface, NonceManager, Wallet, ZeroAddress, isError, parseEther, type JsonRpcProvider, type TransactionReceipt } from 'ethers';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import rejectingPayeeArtifact from '../../contracts/artifacts/RejectingPayee.json';
import freezableTokenArtifact from '../../contracts/artifacts/TestFreezableToken.json';
import { ANVIL_ACCOUNTS } from '../../scripts/local/anvil';
import { splitArtifact, splitFactoryArtifact, testUsdcArtifact, testUsdtArtifact } from '../../shared/adapters/evm/artifacts';
import { ChainUnavailableError, EvmChain, InvalidSplitError } from '../../shared/adapters/evm/chain';
import { createProvider } from '../../shared/adapters/evm/provider';
import type { SplitPayee } from '../../shared/ports/chain';

const local = inject('chain');
// Accounts of this file's own: other test files may be sending from the relayer (account 0) right now.
const relayerAccount = ANVIL_ACCOUNTS[9];
const buyerAccount = ANVIL_ACCOUNTS[8];
const buyerAddress = buyerAccount.address;

const splitInterface = new Interface(splitArtifact.abi);
const factoryAndSplitErrors = new Interface([
  ...new Interface(splitFactoryArtifact.abi).fragments,
  ...splitInterface.fragments.filter((fragment) => fragment.type === 'error'),
]);

let provider: JsonRpcProvider;
let chain: EvmChain;
let buyer: NonceManager;
let usdc: Contract;
let usdt: Contract;
let factory: Contract;

beforeAll(() => {
  provider = createProvider(local.rpcUrl, local.chainId);
  chain = new EvmChain({
    rpcUrl: local.rpcUrl,
    chainId: local.chainId,
    relayerPrivateKey: relayerAccount.privateKey,
    splitFactory: local.splitFactory,
    tokens: [local.usdc, local.usdt],
    provider,
  });
  buyer = new NonceManager(new Wallet(buyerAccount.privateKey, provider));
  usdc = new Contract(local.usdc, testUsdcArtifact.abi, buyer);
  usdt = new Contract(local.usdt, testUsdtArtifact.abi, buyer);
  factory = new Contract(local.splitFactory, factoryAndSplitErrors, buyer);
});
afterAll(() => provider.destroy());

/** Payees nobody has used: their balances start at zero and their split does not exist yet. */
const freshPayees = (bps = [9000, 700, 300]): SplitPayee[] =>
  bps.map((share) => ({ address: Wallet.createRandom().address.toLowerCase(), bps: share }));

const splitAt = (address: string) => new Contract(address, splitInterface, buyer);

const call = async (contract: Contract, method: string, ...args: unknown[]) => {
  try {
    const tx = await contract.getFunction(method).send(...args);
    const receipt = await tx.wait();
    if (!receipt || receipt.status !== 1) throw new Error(`${method} failed`);
    return receipt;
  } catch (error) {
    // The nonce manager counted a nonce for a transaction that may never have been sent (its gas
    // estimate reverted): start again from the chain's count, or every later send waits on the gap.
    buyer.reset();
    throw error;
  }
};

const sendEth = async (to: string, value: bigint) => {
  const receipt = await (await buyer.sendTransaction({ to, value })).wait();
  if (!receipt) throw new Error('ETH transfer not mined');
  return receipt;
};

/** The custom error a call reverted with (decoded with the factory's and the split's errors). */
const revertName = async (promise: Promise<unknown>): Promise<string> => {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!isError(error, 'CALL_EXCEPTION')) throw new Error(`expected a revert, got ${String(error)}`);
  return error.revert?.name ?? factoryAndSplitErrors.parseError(error.data ?? '0x')?.name ?? 'unknown';
};

const balances = (token: Contract | 'eth', holders: string[]) =>
  Promise.all(holders.map(async (holder) => (token === 'eth' ? provider.getBalance(holder) : (token.getFunction('balanceOf').staticCall(holder) as Promise<bigint>))));

describe('split deployment', () => {
  it('deploys a split whose code, payees and creation event are on chain, once per payee set', async () => {
    const payees = freshPayees();
    const first = await chain.deploySplit(payees);
    expect(first).toEqual({ address: expect.stringMatching(/^0x[0-9a-f]{40}$/), txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/), blockNumber: expect.any(Number), created: true });
    expect(await provider.getCode(first.address)).not.toBe('0x');
    expect(await chain.readSplit(first.address)).toEqual(payees);

    const receipt = await provider.getTransactionReceipt(first.txHash);
    const created = receipt?.logs.map((log) => factoryAndSplitErrors.parseLog(log)).find((event) => event?.name === 'SplitCreated');
    expect(created?.args.toObject(true)).toEqual({
      split: expect.stringMatching(new RegExp(`^${first.address}$`, 'i')),
      merchant: expect.stringMatching(new RegExp(`^${payees[0]?.address}$`, 'i')),
      payees: payees.map((payee) => expect.stringMatching(new RegExp(`^${payee.address}$`, 'i'))),
      bps: [9000n, 700n, 300n],
    });

    const nonceBefore = await provider.getTransactionCount(relayerAccount.address);
    const again = await chain.deploySplit(payees.map((payee) => ({ ...payee, address: payee.address.toUpperCase().replace('0X', '0x') })));
    expect(again).toEqual({ ...first, created: false });
    expect(await provider.getTransactionCount(relayerAccount.address)).toBe(nonceBefore);

    const other = await chain.deploySplit(freshPayees());
    expect(other.created).toBe(true);
    expect(other.address).not.toBe(first.address);
    const sameWalletsOtherShares = await chain.deploySplit(payees.map((payee, index) => ({ ...payee, bps: [9500, 400, 100][index] ?? 0 })));
    expect(sameWalletsOtherShares.address).not.toBe(first.address);
  });

  it('finds a split another wallet deployed through the factory, with its creating transaction, and none before', async () => {
    const payees = freshPayees([9_800, 200]);
    expect(await chain.findSplit(payees)).toBeUndefined();
    const nonceBefore = await provider.getTransactionCount(relayerAccount.address);
    // The merchant's own wallet sends the factory's call (here the buyer account stands in for it).
    const receipt = await call(factory, 'createSplit', payees.map((payee) => payee.address), payees.map((payee) => payee.bps));
    const found = await chain.findSplit(payees);
    expect(found).toEqual({ address: expect.stringMatching(/^0x[0-9a-f]{40}$/), txHash: receipt.hash, blockNumber: receipt.blockNumber, created: false });
    expect(await chain.readSplit(found!.address)).toEqual(payees);
    expect(chain.splitFactory).toBe(local.splitFactory.toLowerCase());
    // Finding sends nothing.
    expect(await provider.getTransactionCount(relayerAccount.address)).toBe(nonceBefore);
    expect(await chain.findSplit(payees.map((payee, index) => ({ ...payee, bps: [9_700, 300][index]! })))).toBeUndefined();
  });

  it('returns the existing split when the factory is called directly for payees that already have one', async () => {
    const payees = freshPayees([10_000]);
    const deployed = await chain.deploySplit(payees);
    const args = [[payees[0]?.address], [10_000]];
    expect((await factory.getFunction('createSplit').staticCall(...args)).toLowerCase()).toBe(deployed.address);
    const receipt = await call(factory, 'createSplit', ...args);
    expect(receipt.logs).toEqual([]);
  });

  it('reads no split where there is none: an account without code, or a contract that is not a split', async () => {
    expect(await chain.readSplit(Wallet.createRandom().address)).toBeUndefined();
    expect(await chain.readSplit(local.usdc)).toBeUndefined();
  });

  const zero = (payees: SplitPayee[]) => payees.map((payee, index) => (index === 1 ? { ...payee, address: ZeroAddress } : payee));
  it.each([
    { case: 'bps summing to less than 10000', payees: freshPayees([9000, 700, 299]), reason: 'InvalidBpsTotal' },
    { case: 'bps summing to more than 10000', payees: freshPayees([9000, 700, 301]), reason: 'InvalidBpsTotal' },
    { case: 'a zero-address payee', payees: zero(freshPayees()), reason: 'ZeroAddressPayee' },
    { case: 'no payees', payees: [], reason: 'NoPayees' },
    { case: 'a payee listed twice', payees: [{ address: buyerAddress, bps: 5000 }, { address: buyerAddress, bps: 5000 }], reason: 'DuplicatePayee' },
  ])('rejects $case ($reason) and deploys nothing', async ({ payees, reason }) => {
    const error = await chain.deploySplit(payees).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(InvalidSplitError);
    expect((error as InvalidSplitError).reason).toBe(reason);
    const predicted: string = await factory.getFunction('predictSplit').staticCall(payees.map((payee) => payee.address), payees.map((payee) => payee.bps));
    expect(await provider.getCode(predicted)).toBe('0x');
  });

  it('rejects payees and bps of different lengths', async () => {
    const [a, b] = freshPayees([5000, 5000]).map((payee) => payee.address);
    expect(await revertName(factory.getFunction('createSplit').staticCall([a, b], [10_000]))).toBe('LengthMismatch');
    expect(await revertName(factory.getFunction('createSplit').staticCall([a], [5000, 5000]))).toBe('LengthMismatch');
  });

  it('keeps deploying after rejected payee sets: a refused call costs the relayer no nonce', async () => {
    await expect(chain.deploySplit(freshPayees([1]))).rejects.toBeInstanceOf(InvalidSplitError);
    await expect(chain.deploySplit(freshPayees([1]))).rejects.toBeInstanceOf(InvalidSplitError);
    const deployed = await Promise.all([chain.deploySplit(freshPayees()), chain.deploySplit(freshPayees())]);
    expect(deployed.map((split) => split.created)).toEqual([true, true]);
  });

  it('cannot be initialized twice, nor can the implementation behind the clones be initialized', async () => {
    const deployed = await chain.deploySplit(freshPayees());
    const payees = freshPayees([10_000]).map((payee) => payee.address);
    expect(await revertName(splitAt(deployed.address).getFunction('initialize').staticCall(payees, [10_000]))).toBe('InvalidInitialization');
    const implementation: string = await factory.getFunction('implementation').staticCall();
    expect(await revertName(splitAt(implementation).getFunction('initialize').staticCall(payees, [10_000]))).toBe('InvalidInitialization');
  });
});

describe('split distribution', () => {
  it('pays every payee its share of ETH and ERC-20 payments, the rounding remainder to the merchant, to the last unit', async () => {
    const payees = freshPayees();
    const wallets = payees.map((payee) => payee.address);
    const { address: split, blockNumber: createdAt } = await chain.deploySplit(payees);
    const usdcIn = 100_000_001n; // 100 USDC and one atomic unit
    const usdtIn = 5_000_000n;
    const ethIn = parseEther('1') + 99n;

    await call(usdc, 'mint', buyerAddress, usdcIn);
    await call(usdt, 'mint', buyerAddress, usdtIn);
    await call(usdc, 'transfer', split, usdcIn);
    await call(usdt, 'transfer', split, usdtIn);
    await sendEth(split, ethIn);
    const splitContract = splitAt(split);
    await call(splitContract, 'distribute', local.usdc);
    await call(splitContract, 'distribute', local.usdt);
    await call(splitContract, 'distribute', ZeroAddress);

    // 9000/700/300 bps. USDC: 90,000,000.9 / 7,000,000.07 / 3,000,000.03 round down; the merchant gets the 1 left.
    const usdcOut = [90_000_001n, 7_000_000n, 3_000_000n];
    expect(await balances(usdc, wallets)).toEqual(usdcOut);
    expect(await balances(usdt, wallets)).toEqual([4_500_000n, 350_000n, 150_000n]);
    // ETH: 0.9e18 + 89.1, 0.07e18 + 6.93, 0.03e18 + 2.97: the merchant gets its 89 and the 2 left over.
    const ethOut = [parseEther('0.9') + 91n, parseEther('0.07') + 6n, parseEther('0.03') + 2n];
    expect(await balances('eth', wallets)).toEqual(ethOut);
    const sum = (amounts: bigint[]) => amounts.reduce((total, amount) => total + amount, 0n);
    expect(sum(usdcOut)).toBe(usdcIn);
    expect(sum(ethOut)).toBe(ethIn);
    expect(await balances(usdc, [split])).toEqual([0n]);
    expect(await balances('eth', [split])).toEqual([0n]);

    const transfers = await chain.splitTransfers(split, { fromBlock: createdAt, toBlock: await chain.blockNumber() });
    const payment = (token: string, amount: bigint) => ({ kind: 'payment', token, from: buyerAddress, to: split, amount: amount.toString() });
    const distribution = (token: string, amounts: bigint[]) =>
      amounts.map((amount, index) => ({ kind: 'distribution', token, from: split, to: wallets[index], amount: amount.toString() }));
    expect(transfers.map(({ kind, token, from, to, amount }) => ({ kind, token, from, to, amount }))).toEqual([
      payment(local.usdc, usdcIn),
      payment(local.usdt, usdtIn),
      payment(ZeroAddress, ethIn),
      ...distribution(local.usdc, usdcOut),
      ...distribution(local.usdt, [4_500_000n, 350_000n, 150_000n]),
      ...distribution(ZeroAddress, ethOut),
    ]);
    for (const transfer of transfers) {
      expect(transfer.txHash).toMatch(/^0x[0-9a-f]{64}$/);
      expect(await provider.getTransactionReceipt(transfer.txHash).then((receipt) => receipt?.blockNumber)).toBe(transfer.blockNumber);
    }
    const order = transfers.map((transfer) => [transfer.blockNumber, transfer.logIndex] as const);
    expect(order).toEqual([...order].sort((a, b) => a[0] - b[0] || a[1] - b[1]));
    // The range is honoured: nothing had happened to the split in its creation block.
    expect(await chain.splitTransfers(split, { fromBlock: createdAt, toBlock: createdAt })).toEqual([]);
  });

  it('credits an ETH payee that rejects the transfer, without blocking the others or paying the credit twice', async () => {
    const rejectingFactory = new ContractFactory(rejectingPayeeArtifact.abi, rejectingPayeeArtifact.bytecode, buyer);
    const rejecting = await rejectingFactory.deploy();
    await rejecting.waitForDeployment();
    const payee = new Contract(await rejecting.getAddress(), rejectingPayeeArtifact.abi, buyer);
    const [merchant, partner, rescue] = freshPayees([1, 1, 1]).map((p) => p.address) as [string, string, string];
    const payeeAddress = (await payee.getAddress()).toLowerCase();
    const wallets = [merchant, payeeAddress, partner];
    const { address: split, blockNumber: createdAt } = await chain.deploySplit([
      { address: merchant, bps: 9000 },
      { address: payeeAddress, bps: 700 },
      { address: partner, bps: 300 },
    ]);
    const splitContract = splitAt(split);
    const credit = () => splitContract.getFunction('credits').staticCall(payeeAddress) as Promise<bigint>;
    const oneEthRound = async () => {
      await sendEth(split, parseEther('1'));
      await call(splitContract, 'distribute', ZeroAddress);
    };

    await oneEthRound();
    expect(await balances('eth', wallets)).toEqual([parseEther('0.9'), 0n, parseEther('0.03')]);
    expect(await credit()).toBe(parseEther('0.07'));
    expect(await balances('eth', [split])).toEqual([parseEther('0.07')]);
    expect(await splitContract.getFunction('distributable').staticCall(ZeroAddress)).toBe(0n);

    // Nothing new arrived: the credited ETH is not handed out again.
    await call(splitContract, 'distribute', ZeroAddress);
    expect(await balances('eth', wallets)).toEqual([parseEther('0.9'), 0n, parseEther('0.03')]);

    await oneEthRound();
    expect(await balances('eth', wallets)).toEqual([parseEther('1.8'), 0n, parseEther('0.06')]);
    expect(await credit()).toBe(parseEther('0.14'));

    // A payee that re-enters distribute() from its receive() is stopped by the guard and credited.
    await call(payee, 'setMode', 2);
    await oneEthRound();
    expect(await balances('eth', wallets)).toEqual([parseEther('2.7'), 0n, parseEther('0.09')]);
    expect(await credit()).toBe(parseEther('0.21'));

    // Still rejecting ETH: its own withdrawal fails and the credit stays; it can send the credit elsewhere.
    await call(payee, 'setMode', 0);
    expect(await revertName(payee.getFunction('withdrawFrom').staticCall(split))).toBe('WithdrawFailed');
    expect(await credit()).toBe(parseEther('0.21'));
    await call(payee, 'withdrawFromTo', split, rescue);
    expect(await balances('eth', [rescue, split])).toEqual([parseEther('0.21'), 0n]);
    expect(await credit()).toBe(0n);
    expect(await splitContract.getFunction('totalCredits').staticCall()).toBe(0n);
    expect(await revertName(payee.getFunction('withdrawFrom').staticCall(split))).toBe('NothingToWithdraw');
    expect(await revertName(splitContract.getFunction('withdraw').staticCall())).toBe('NothingToWithdraw');

    // Accepting ETH again, it is paid directly.
    await call(payee, 'setMode', 1);
    await oneEthRound();
    expect(await balances('eth', wallets)).toEqual([parseEther('3.6'), parseEther('0.07'), parseEther('0.12')]);

    const transfers = await chain.splitTransfers(split, { fromBlock: createdAt, toBlock: await chain.blockNumber() });
    const total = (kind: string) => transfers.filter((t) => t.kind === kind).reduce((sum, t) => sum + BigInt(t.amount), 0n);
    expect(total('payment')).toBe(parseEther('4'));
    expect(total('distribution') + total('withdrawal')).toBe(parseEther('4'));
    expect(transfers.filter((t) => t.to === rescue)).toMatchObject([{ kind: 'withdrawal', token: ZeroAddress, from: split, amount: parseEther('0.21').toString() }]);
  });

  it('lets a credited payee withdraw to itself once it accepts ETH', async () => {
    const rejecting = await new ContractFactory(rejectingPayeeArtifact.abi, rejectingPayeeArtifact.bytecode, buyer).deploy();
    await rejecting.waitForDeployment();
    const payeeAddress = (await rejecting.getAddress()).toLowerCase();
    const payee = new Contract(payeeAddress, rejectingPayeeArtifact.abi, buyer);
    const [merchant] = freshPayees([1]).map((p) => p.address);
    const { address: split } = await chain.deploySplit([
      { address: merchant ?? '', bps: 5000 },
      { address: payeeAddress, bps: 5000 },
    ]);
    await sendEth(split, 3n);
    await call(splitAt(split), 'distribute', ZeroAddress);
    expect(await balances('eth', [merchant ?? '', payeeAddress, split])).toEqual([2n, 0n, 1n]);
    await call(payee, 'setMode', 1);
    await call(payee, 'withdrawFrom', split);
    expect(await balances('eth', [payeeAddress, split])).toEqual([1n, 0n]);
    expect(await revertName(payee.getFunction('withdrawFrom').staticCall(split))).toBe('NothingToWithdraw');
  });
});

describe('split token distribution with a payee the token refuses', () => {
  // TestFreezableToken's ways of refusing a transfer to a frozen account (its Refusal enum).
  const REFUSAL = { revert: 0, returnFalse: 1, burnGas: 2 } as const;

  /** A token of this test's own, so the buyer is its owner and may blacklist. */
  const deployToken = async (kind: 'usdc' | keyof typeof REFUSAL): Promise<Contract> => {
    const contract =
      kind === 'usdc'
        ? await new ContractFactory(testUsdcArtifact.abi, testUsdcArtifact.bytecode, buyer).deploy()
        : await new ContractFactory(freezableTokenArtifact.abi, freezableTokenArtifact.bytecode, buyer).deploy(REFUSAL[kind]);
    await contract.waitForDeployment();
    return new Contract(await contract.getAddress(), kind === 'usdc' ? testUsdcArtifact.abi : freezableTokenArtifact.abi, buyer);
  };

  /** A payee with a key (so it can withdraw) and the ETH to pay its gas. */
  const fundedWallet = async () => {
    const wallet = Wallet.createRandom().connect(provider);
    await sendEth(wallet.address, parseEther('1'));
    return wallet;
  };

  const tokenEvents = (receipt: TransactionReceipt, name: string) =>
    receipt.logs
      .map((log) => (log.address.toLowerCase() === receipt.to?.toLowerCase() ? splitInterface.parseLog(log) : null))
      .filter((event) => event?.name === name)
      .map((event) => event?.args.toArray().map((arg: unknown) => (typeof arg === 'string' ? arg.toLowerCase() : arg)));

  it('pays the others their exact share when USDC blacklists a payee, credits that payee exactly, and lets it withdraw to another address once', async () => {
    const token = await deployToken('usdc');
    const tokenAddress = (await token.getAddress()).toLowerCase();
    const frozen = await fundedWallet();
    const [merchant, partner, rescue] = freshPayees([1, 1, 1]).map((p) => p.address) as [string, string, string];
    const frozenAddress = frozen.address.toLowerCase();
    const wallets = [merchant, frozenAddress, partner];
    const { address: split, blockNumber: createdAt } = await chain.deploySplit([
      { address: merchant, bps: 9000 },
      { address: frozenAddress, bps: 700 },
      { address: partner, bps: 300 },
    ]);
    const splitContract = splitAt(split);
    const credit = () => splitContract.getFunction('tokenCredits').staticCall(tokenAddress, frozenAddress) as Promise<bigint>;
    const totalCredit = () => splitContract.getFunction('totalTokenCredits').staticCall(tokenAddress) as Promise<bigint>;
    await call(token, 'blacklist', frozenAddress);

    // 9000/700/300 bps of 100,000,001: 90,000,000.9 / 7,000,000.07 / 3,000,000.03; the merchant gets the 1 left.
    await call(token, 'mint', split, 100_000_001n);
    const first = await call(splitContract, 'distribute', tokenAddress);
    expect(await balances(token, [...wallets, split])).toEqual([90_000_001n, 0n, 3_000_000n, 7_000_000n]);
    expect(await credit()).toBe(7_000_000n);
    expect(await totalCredit()).toBe(7_000_000n);
    expect(tokenEvents(first, 'TokenCredited')).toEqual([[tokenAddress, frozenAddress, 7_000_000n]]);
    expect(tokenEvents(first, 'Distributed')).toEqual([
      [tokenAddress, merchant, 90_000_001n],
      [tokenAddress, partner, 3_000_000n],
    ]);
    expect(await splitContract.getFunction('distributable').staticCall(tokenAddress)).toBe(0n);

    // Nothing new arrived: the credited tokens are not split again.
    await call(splitContract, 'distribute', tokenAddress);
    expect(await balances(token, [...wallets, split])).toEqual([90_000_001n, 0n, 3_000_000n, 7_000_000n]);
    expect(await credit()).toBe(7_000_000n);

    // New money is split alone: 33,333,333 gives 2,333,333.31 and 999,999.99; the merchant gets 30,000,001.
    await call(token, 'mint', split, 33_333_333n);
    expect(await splitContract.getFunction('distributable').staticCall(tokenAddress)).toBe(33_333_333n);
    await call(splitContract, 'distribute', tokenAddress);
    expect(await balances(token, [...wallets, split])).toEqual([120_000_002n, 0n, 3_999_999n, 9_333_333n]);
    expect(await credit()).toBe(9_333_333n);
    expect(await totalCredit()).toBe(9_333_333n);

    // ETH is apart: the frozen payee takes ETH, and no ETH credit arises from the token's.
    await sendEth(split, 1000n);
    await call(splitContract, 'distribute', ZeroAddress);
    expect(await splitContract.getFunction('credits').staticCall(frozenAddress)).toBe(0n);
    expect(await splitContract.getFunction('totalCredits').staticCall()).toBe(0n);
    expect(await balances('eth', [merchant, partner, split])).toEqual([900n, 30n, 0n]);

    const asFrozen = splitAt(split).connect(frozen) as Contract;
    // Still frozen: a withdrawal to itself is refused by the token, and the credit stays.
    await expect(asFrozen.getFunction('withdrawToken').staticCall(tokenAddress, frozenAddress)).rejects.toThrow();
    expect(await revertName(asFrozen.getFunction('withdrawToken').staticCall(tokenAddress, ZeroAddress))).toBe('ZeroAddressRecipient');
    // Only its own credit: another account has nothing to withdraw.
    expect(await revertName(splitContract.getFunction('withdrawToken').staticCall(tokenAddress, buyerAddress))).toBe('NothingToWithdraw');

    const withdrawal = await call(asFrozen, 'withdrawToken', tokenAddress, rescue);
    expect(tokenEvents(withdrawal, 'TokenWithdrawn')).toEqual([[tokenAddress, frozenAddress, rescue.toLowerCase(), 9_333_333n]]);
    expect(await balances(token, [rescue, frozenAddress, split])).toEqual([9_333_333n, 0n, 0n]);
    expect(await credit()).toBe(0n);
    expect(await totalCredit()).toBe(0n);
    expect(await revertName(asFrozen.getFunction('withdrawToken').staticCall(tokenAddress, rescue))).toBe('NothingToWithdraw');
    await call(splitContract, 'distribute', tokenAddress);
    expect(await balances(token, [...wallets, rescue, split])).toEqual([120_000_002n, 0n, 3_999_999n, 9_333_333n, 0n]);

    // The merchant's transaction list sees the withdrawal leave the split, so tokens in equal tokens out.
    const watching = new EvmChain({ rpcUrl: local.rpcUrl, chainId: local.chainId, relayerPrivateKey: relayerAccount.privateKey, splitFactory: local.splitFactory, tokens: [tokenAddress], provider });
    const transfers = (await watching.splitTransfers(split, { fromBlock: createdAt, toBlock: await chain.blockNumber() })).filter((t) => t.token === tokenAddress);
    const total = (kind: string) => transfers.filter((t) => t.kind === kind).reduce((sum, t) => sum + BigInt(t.amount), 0n);
    expect(total('payment')).toBe(133_333_334n);
    expect(total('distribution') + total('withdrawal')).toBe(133_333_334n);
    expect(transfers.filter((t) => t.to === rescue)).toMatchObject([{ kind: 'withdrawal', token: tokenAddress, from: split, amount: '9333333' }]);
  });

  it.each([
    { refusal: 'revert' as const, how: 'reverts' },
    { refusal: 'returnFalse' as const, how: 'returns false' },
    { refusal: 'burnGas' as const, how: 'burns all the gas it is given' },
  ])('pays the others when a USDT-style token (no return value) $how for a frozen payee, who withdraws once unfrozen', async ({ refusal }) => {
    const token = await deployToken(refusal);
    const tokenAddress = (await token.getAddress()).toLowerCase();
    const frozen = await fundedWallet();
    const [merchant, partner] = freshPayees([1, 1]).map((p) => p.address) as [string, string];
    const frozenAddress = frozen.address.toLowerCase();
    // The frozen payee is not last: the payees after it must still get their gas.
    const { address: split } = await chain.deploySplit([
      { address: merchant, bps: 9000 },
      { address: frozenAddress, bps: 700 },
      { address: partner, bps: 300 },
    ]);
    const splitContract = splitAt(split);
    await call(token, 'blacklist', frozenAddress);
    await call(token, 'mint', split, 10_000_001n);
    // A fixed gas limit: a refusal that burned all the gas it was given would leave too little for the partner.
    const receipt = await call(splitContract, 'distribute', tokenAddress, { gasLimit: 1_000_000 });
    expect(await balances(token, [merchant, frozenAddress, partner, split])).toEqual([9_000_001n, 0n, 300_000n, 700_000n]);
    expect(tokenEvents(receipt, 'TokenCredited')).toEqual([[tokenAddress, frozenAddress, 700_000n]]);
    expect(await splitContract.getFunction('tokenCredits').staticCall(tokenAddress, frozenAddress)).toBe(700_000n);

    await call(token, 'unBlacklist', frozenAddress);
    const asFrozen = splitAt(split).connect(frozen) as Contract;
    await call(asFrozen, 'withdrawToken', tokenAddress, frozenAddress);
    expect(await balances(token, [frozenAddress, split])).toEqual([700_000n, 0n]);
    expect(await splitContract.getFunction('totalTokenCredits').staticCall(tokenAddress)).toBe(0n);
    expect(await revertName(asFrozen.getFunction('withdrawToken').staticCall(tokenAddress, frozenAddress))).toBe('NothingToWithdraw');
  });

  it('will not run on too little gas to give every payee its full allowance, rather than credit payees the caller starved', async () => {
    const token = await deployToken('usdc');
    const tokenAddress = await token.getAddress();
    const { address: split } = await chain.deploySplit(freshPayees());
    const splitContract = splitAt(split);
    await call(token, 'mint', split, 1_000_000n);
    await sendEth(split, 1_000_000n);
    for (const asset of [tokenAddress, ZeroAddress]) {
      expect(await revertName(splitContract.getFunction('distribute').staticCall(asset, { gasLimit: 150_000 }))).toBe('InsufficientGas');
      await call(splitContract, 'distribute', asset);
    }
    expect(await balances(token, [split])).toEqual([0n]);
    expect(await balances('eth', [split])).toEqual([0n]);
  });
});

describe('chain availability', () => {
  it('reports an RPC that does not answer as ChainUnavailableError', async () => {
    const down = new EvmChain({ rpcUrl: 'http://127.0.0.1:1', chainId: local.chainId, relayerPrivateKey: relayerAccount.privateKey, splitFactory: local.splitFactory, tokens: [] });
    await expect(down.blockNumber()).rejects.toBeInstanceOf(ChainUnavailableError);
    await expect(down.deploySplit(freshPayees())).rejects.toBeInstanceOf(ChainUnavailableError);
    await expect(down.readSplit(local.usdc)).rejects.toBeInstanceOf(ChainUnavailableError);
    down.destroy();
  });
});
