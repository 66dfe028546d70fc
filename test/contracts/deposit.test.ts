/**
 * Per-receipt deposit addresses on the run's anvil chain: DepositFactory and its DepositForwarder
 * clones, against the off-chain computation in shared/adapters/evm/deposit-address.ts.
 */
import { Contract, ContractFactory, Interface, NonceManager, Wallet, ZeroAddress, isError, parseEther, type JsonRpcProvider, type TransactionReceipt } from 'ethers';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import freezableTokenArtifact from '../../contracts/artifacts/TestFreezableToken.json';
import reentrantTokenArtifact from '../../contracts/artifacts/ReentrantToken.json';
import { depositFactoryArtifact, depositForwarderArtifact, splitArtifact, splitFactoryArtifact, testUsdcArtifact } from '../../shared/adapters/evm/artifacts';
import { depositAddress, forwarderImplementation, receiptKey } from '../../shared/adapters/evm/deposit-address';
import { createProvider } from '../../shared/adapters/evm/provider';
import { testAccounts } from '../support/chain-merchant';

const local = inject('chain');

const factoryInterface = new Interface(depositFactoryArtifact.abi);
const forwarderInterface = new Interface(depositForwarderArtifact.abi);
const splitInterface = new Interface(splitArtifact.abi);
/** Every error a call here can revert with, to name it. */
const errors = new Interface([...factoryInterface.fragments, ...forwarderInterface.fragments].filter((fragment) => fragment.type === 'error'));

let provider: JsonRpcProvider;
/** This file's own sender (a fresh funded wallet, with test USDC and USDT): no other file shares its nonces. */
let sender: NonceManager;
/** A second, unrelated account: anyone may sweep. */
let stranger: NonceManager;
let factory: Contract;
let usdc: Contract;
let usdt: Contract;
let implementation: string;

beforeAll(async () => {
  provider = createProvider(local.rpcUrl, local.chainId);
  const accounts = await testAccounts(provider);
  sender = new NonceManager(await accounts.newWallet([local.usdc, local.usdt]));
  stranger = new NonceManager(await accounts.newWallet());
  factory = new Contract(local.depositFactory, factoryInterface, sender);
  usdc = new Contract(local.usdc, testUsdcArtifact.abi, sender);
  usdt = new Contract(local.usdt, testUsdcArtifact.abi, sender);
  implementation = (await factory.getFunction('implementation').staticCall()).toLowerCase();
});
afterAll(() => provider.destroy());

const send = async (contract: Contract, method: string, ...args: unknown[]): Promise<TransactionReceipt> => {
  const signer = contract.runner as NonceManager;
  try {
    const receipt = await (await contract.getFunction(method).send(...args)).wait();
    if (!receipt || receipt.status !== 1) throw new Error(`${method} failed`);
    return receipt;
  } catch (error) {
    // A send whose gas estimate reverted was counted by the nonce manager but never sent.
    signer.reset();
    throw error;
  }
};

const sendEth = async (to: string, value: bigint) => {
  const receipt = await (await sender.sendTransaction({ to, value })).wait();
  if (!receipt) throw new Error('ETH transfer not mined');
  return receipt;
};

/** The custom error a call reverted with. */
const revertName = async (promise: Promise<unknown>): Promise<string> => {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!isError(error, 'CALL_EXCEPTION')) throw new Error(`expected a revert, got ${String(error)}`);
  return error.revert?.name ?? errors.parseError(error.data ?? '0x')?.name ?? 'unknown';
};

const balanceOf = async (token: Contract | 'eth', holder: string): Promise<bigint> =>
  token === 'eth' ? provider.getBalance(holder) : (token.getFunction('balanceOf').staticCall(holder) as Promise<bigint>);
const balances = (token: Contract | 'eth', holders: string[]) => Promise.all(holders.map((holder) => balanceOf(token, holder)));

/** A new shop's split (its merchant 9,900 bps, the platform 100), deployed through the run's SplitFactory. */
const newSplit = async () => {
  const payees = [Wallet.createRandom().address.toLowerCase(), Wallet.createRandom().address.toLowerCase()];
  const splitFactory = new Contract(local.splitFactory, splitFactoryArtifact.abi, sender);
  const args = [payees, [9_900, 100]];
  const split = ((await splitFactory.getFunction('predictSplit').staticCall(...args)) as string).toLowerCase();
  await send(splitFactory, 'createSplit', ...args);
  return { split, merchant: payees[0]!, platform: payees[1]! };
};

let receipts = 0;
/** A receipt nobody has used: its key, and its deposit address paying into `split`, computed off chain. */
const newDeposit = (split: string, wallet = Wallet.createRandom().address) => {
  const key = receiptKey({ chainId: local.chainId, wallet, receiptId: `deposit-${Date.now()}-${++receipts}` });
  return { split, key, address: depositAddress({ factory: local.depositFactory, implementation, split, receiptKey: key }) };
};

const forwarderAt = (address: string, runner: NonceManager = sender) => new Contract(address, forwarderInterface, runner);
const sweepMany = (deposits: Array<{ split: string; key: string; tokens: string[] }>, runner: NonceManager = sender) =>
  send(factory.connect(runner) as Contract, 'sweepMany', deposits.map(({ split, key, tokens }) => [split, key, tokens]));

const factoryEvents = (receipt: TransactionReceipt, name: string) =>
  receipt.logs
    .filter((log) => log.address.toLowerCase() === local.depositFactory)
    .map((log) => factoryInterface.parseLog(log))
    .filter((event) => event?.name === name)
    .map((event) => event!.args.toArray().map((arg: unknown) => (typeof arg === 'string' ? arg.toLowerCase() : arg)));

/**
 * A token of this file's own, so this file may freeze accounts: a USDC with a blacklist, a USDT-style
 * one whose transfer returns nothing (a frozen account's transfer reverts, as USDT's does), or one that
 * burns all the gas it is given on a frozen account's transfer (TestFreezableToken's Refusal enum).
 */
const deployToken = async (kind: 'usdc' | 'no-return' | 'burn-gas'): Promise<Contract> => {
  const artifact = kind === 'usdc' ? testUsdcArtifact : freezableTokenArtifact;
  const contract = await new ContractFactory(artifact.abi, artifact.bytecode, sender).deploy(...(kind === 'usdc' ? [] : [kind === 'no-return' ? 0 : 2]));
  await contract.waitForDeployment();
  return new Contract((await contract.getAddress()).toLowerCase(), artifact.abi, sender);
};

describe('deposit address', () => {
  it('is computed off chain exactly as the factory predicts and deploys it, with the receipt key the factory derives', async () => {
    expect(implementation).toBe(forwarderImplementation(local.depositFactory));
    const wallet = Wallet.createRandom().address.toLowerCase();
    const receiptId = 'order-1001';
    const key = receiptKey({ chainId: local.chainId, wallet, receiptId });
    expect(await factory.getFunction('receiptKey').staticCall(wallet, receiptId)).toBe(key);
    expect(await factory.getFunction('RECEIPT_KEY_VERSION').staticCall()).toBe('receipt-deposit-v1');

    const { split } = await newSplit();
    const address = depositAddress({ factory: local.depositFactory, implementation, split, receiptKey: key });
    expect(((await factory.getFunction('predictForwarder').staticCall(split, key)) as string).toLowerCase()).toBe(address);
    // Nothing is deployed to receive a payment.
    expect(await provider.getCode(address)).toBe('0x');

    const receipt = await send(factory, 'deployForwarder', split, key);
    expect(factoryEvents(receipt, 'ForwarderCreated')).toEqual([[address, split, key]]);
    // The deployed code is the ERC-1167 proxy to the implementation, nothing else.
    expect(await provider.getCode(address)).toBe(`0x363d3d373d3d3d363d73${implementation.slice(2)}5af43d82803e903d91602b57fd5bf3`);
    const forwarder = forwarderAt(address);
    expect((await forwarder.getFunction('split').staticCall()).toLowerCase()).toBe(split);
    expect((await forwarder.getFunction('factory').staticCall()).toLowerCase()).toBe(local.depositFactory);

    // Idempotent: a second deployment returns the same forwarder and emits nothing.
    expect(((await factory.getFunction('deployForwarder').staticCall(split, key)) as string).toLowerCase()).toBe(address);
    expect((await send(factory, 'deployForwarder', split, key)).logs).toEqual([]);

    // The same receipt paying into another split has another address, and this one still pays the first.
    const other = await newSplit();
    const elsewhere = depositAddress({ factory: local.depositFactory, implementation, split: other.split, receiptKey: key });
    expect(elsewhere).not.toBe(address);
    expect(((await factory.getFunction('predictForwarder').staticCall(other.split, key)) as string).toLowerCase()).toBe(elsewhere);
  });

  it('refuses the zero split: no prediction, no forwarder, no batch', async () => {
    const key = receiptKey({ chainId: local.chainId, wallet: Wallet.createRandom().address, receiptId: 'zero-split' });
    expect(() => depositAddress({ factory: local.depositFactory, implementation, split: ZeroAddress, receiptKey: key })).toThrow(/zero split/);
    expect(await revertName(factory.getFunction('predictForwarder').staticCall(ZeroAddress, key))).toBe('ZeroSplit');
    expect(await revertName(factory.getFunction('deployForwarder').staticCall(ZeroAddress, key))).toBe('ZeroSplit');
    const { split } = await newSplit();
    const fine = newDeposit(split);
    expect(
      await revertName(
        factory.getFunction('sweepMany').staticCall([
          [split, fine.key, [local.usdc]],
          [ZeroAddress, key, [local.usdc]],
        ]),
      ),
    ).toBe('ZeroSplit');
  });
});

describe('deposit sweep', () => {
  it('sends USDC, USDT and ETH sent before deployment, and ETH and USDC sent after it, to the split alone, whoever sweeps', async () => {
    const { split, merchant, platform } = await newSplit();
    const deposit = newDeposit(split);
    const splitBefore = await Promise.all([balanceOf(usdc, split), balanceOf(usdt, split), balanceOf('eth', split)]);
    await send(usdc, 'transfer', deposit.address, 25_000_001n);
    await send(usdt, 'transfer', deposit.address, 5_000_000n);
    await sendEth(deposit.address, parseEther('1'));
    const strangerAddress = await stranger.getAddress();
    const strangerTokens = await Promise.all([balanceOf(usdc, strangerAddress), balanceOf(usdt, strangerAddress)]);

    // Deploy and sweep in one call, sent by an account that has nothing to do with the shop.
    const receipt = await sweepMany([{ split: deposit.split, key: deposit.key, tokens: [local.usdc, local.usdt, ZeroAddress] }], stranger);
    expect(factoryEvents(receipt, 'ForwarderCreated')).toEqual([[deposit.address, split, deposit.key]]);
    expect(factoryEvents(receipt, 'SweepFailed')).toEqual([]);
    expect(await balances(usdc, [deposit.address, split])).toEqual([0n, splitBefore[0]! + 25_000_001n]);
    expect(await balances(usdt, [deposit.address, split])).toEqual([0n, splitBefore[1]! + 5_000_000n]);
    expect(await balances('eth', [deposit.address, split])).toEqual([0n, splitBefore[2]! + parseEther('1')]);
    expect(await Promise.all([balanceOf(usdc, strangerAddress), balanceOf(usdt, strangerAddress)])).toEqual(strangerTokens);
    // The split sees the ETH arrive from the deposit address: the address names the receipt.
    const received = receipt.logs.filter((log) => log.address.toLowerCase() === split).map((log) => splitInterface.parseLog(log));
    expect(received.map((event) => [event?.name, event?.args[0].toLowerCase(), event?.args[1]])).toEqual([['PaymentReceived', deposit.address, parseEther('1')]]);

    // Sent after deployment: the forwarder accepts it (a plain transfer, receive()) and a direct sweep moves it.
    await sendEth(deposit.address, 12_345n);
    await send(usdc, 'transfer', deposit.address, 7n);
    expect(await balanceOf('eth', deposit.address)).toBe(12_345n);
    await send(forwarderAt(deposit.address, stranger), 'sweep', [ZeroAddress, local.usdc]);
    expect(await balances('eth', [deposit.address, split])).toEqual([0n, splitBefore[2]! + parseEther('1') + 12_345n]);
    expect(await balances(usdc, [deposit.address, split])).toEqual([0n, splitBefore[0]! + 25_000_008n]);

    // A sweep of nothing moves nothing and does not fail.
    const empty = await send(forwarderAt(deposit.address, stranger), 'sweep', [ZeroAddress, local.usdc, local.usdt]);
    expect(empty.logs).toEqual([]);

    // From the split on, the payees' shares as for any payment: 9,900/100 bps, the remainder to the merchant.
    await send(new Contract(split, splitInterface, sender), 'distribute', local.usdc);
    expect(await balances(usdc, [merchant, platform, split])).toEqual([24_750_008n, 250_000n, 0n]);
  });

  it('recovers a token the shop does not accept, one that returns no bool, to the split, which then holds it and can pay it out', async () => {
    const { split, merchant, platform } = await newSplit();
    const token = await deployToken('no-return');
    const tokenAddress = await token.getAddress();
    const deposit = newDeposit(split);
    await send(token, 'mint', deposit.address, 1_000_000n);
    await sweepMany([{ split, key: deposit.key, tokens: [tokenAddress] }]);
    expect(await balances(token, [deposit.address, split])).toEqual([0n, 1_000_000n]);
    await send(new Contract(split, splitInterface, sender), 'distribute', tokenAddress);
    expect(await balances(token, [merchant, platform, split])).toEqual([990_000n, 10_000n, 0n]);
  });
});

describe('deposit safety', () => {
  it('has no way to name a recipient: the forwarder exposes only its split, its factory, the one-time binding and the sweep', () => {
    const functions = forwarderInterface.fragments.filter((fragment) => fragment.type === 'function').map((fragment) => fragment.format('sighash'));
    expect(functions.sort()).toEqual(['factory()', 'initialize(address)', 'split()', 'sweep(address[])']);
    expect(factoryInterface.fragments.filter((fragment) => fragment.type === 'function').map((fragment) => fragment.format('sighash')).sort()).toEqual([
      'RECEIPT_KEY_VERSION()',
      'SWEEP_GAS_PER_TOKEN()',
      'deployForwarder(address,bytes32)',
      'implementation()',
      'predictForwarder(address,bytes32)',
      'receiptKey(address,string)',
      'sweepMany((address,bytes32,address[])[])',
    ]);
  });

  it('cannot be bound to another split: not by anyone, not twice even by the factory, and the implementation never', async () => {
    const { split } = await newSplit();
    const deposit = newDeposit(split);
    await send(factory, 'deployForwarder', split, deposit.key);
    // Read-only calls through the provider: eth_call lets any sender be named, the factory's own address too.
    const forwarder = new Contract(deposit.address, forwarderInterface, provider);
    const thief = await stranger.getAddress();
    expect(await revertName(forwarder.getFunction('initialize').staticCall(thief, { from: thief }))).toBe('NotFactory');
    expect(await revertName(forwarder.getFunction('initialize').staticCall(thief, { from: local.depositFactory }))).toBe('AlreadyInitialized');
    const bare = new Contract(implementation, forwarderInterface, provider);
    expect(await revertName(bare.getFunction('initialize').staticCall(thief, { from: local.depositFactory }))).toBe('NotAClone');
    expect(await revertName(bare.getFunction('initialize').staticCall(thief, { from: thief }))).toBe('NotFactory');
    // The unbound implementation sweeps nothing anywhere.
    expect(await revertName(bare.getFunction('sweep').staticCall([ZeroAddress]))).toBe('NotInitialized');
    expect((await bare.getFunction('split').staticCall()) as string).toBe(ZeroAddress);
    expect(((await forwarder.getFunction('split').staticCall()) as string).toLowerCase()).toBe(split);
  });

  it('lets no token re-enter a sweep to move anything, and every unit still reaches the split', async () => {
    const { split } = await newSplit();
    const deposit = newDeposit(split);
    const hostile = await new ContractFactory(reentrantTokenArtifact.abi, reentrantTokenArtifact.bytecode, stranger).deploy();
    await hostile.waitForDeployment();
    const token = new Contract((await hostile.getAddress()).toLowerCase(), reentrantTokenArtifact.abi, stranger);
    const tokenAddress = await token.getAddress();
    await send(token, 'mint', deposit.address, 300n);
    await send(usdc, 'transfer', deposit.address, 1_000_000n);
    await sendEth(deposit.address, 5_000n);
    await send(factory, 'deployForwarder', split, deposit.key);
    const splitUsdc = await balanceOf(usdc, split);

    const hookEnded = async () => {
      const result = (await token.getFunction('hookResult').staticCall()) as string;
      return {
        called: (await token.getFunction('hookCalled').staticCall()) as boolean,
        succeeded: (await token.getFunction('hookSucceeded').staticCall()) as boolean,
        reason: result === '0x' ? undefined : errors.parseError(result)?.name,
      };
    };

    // 1. From inside its own transfer, the token asks the forwarder to sweep ETH and USDC again.
    await send(token, 'setHook', deposit.address, forwarderInterface.encodeFunctionData('sweep', [[ZeroAddress, local.usdc]]));
    await send(token, 'mint', deposit.address, 1n);
    await send(forwarderAt(deposit.address, stranger), 'sweep', [tokenAddress]);
    expect(await hookEnded()).toEqual({ called: true, succeeded: false, reason: 'ReentrancyGuardReentrantCall' });
    // 2. It tries to bind the forwarder to itself.
    await send(token, 'setHook', deposit.address, forwarderInterface.encodeFunctionData('initialize', [tokenAddress]));
    await send(token, 'mint', deposit.address, 1n);
    await send(forwarderAt(deposit.address, stranger), 'sweep', [tokenAddress]);
    expect(await hookEnded()).toEqual({ called: true, succeeded: false, reason: 'NotFactory' });
    // 3. Through the factory's batch: a batch entered from inside a sweep's bounded allowance can never
    // give its own sweep a whole one, so it is refused before reaching the forwarder (whose guard waits behind).
    await send(token, 'setHook', local.depositFactory, factoryInterface.encodeFunctionData('sweepMany', [[[split, deposit.key, [ZeroAddress, local.usdc]]]]));
    await send(token, 'mint', deposit.address, 1n);
    await sweepMany([{ split, key: deposit.key, tokens: [tokenAddress] }], stranger);
    expect(await hookEnded()).toEqual({ called: true, succeeded: false, reason: 'InsufficientGas' });

    // The hostile token went to the split, as any token would; ETH and USDC stayed put until a plain sweep.
    expect(await balances(token, [deposit.address, split, tokenAddress, await stranger.getAddress()])).toEqual([0n, 303n, 0n, 0n]);
    expect(await balances(usdc, [deposit.address, split])).toEqual([1_000_000n, splitUsdc]);
    expect(await balanceOf('eth', deposit.address)).toBe(5_000n);
    await send(forwarderAt(deposit.address, stranger), 'sweep', [ZeroAddress, local.usdc]);
    expect(await balances(usdc, [deposit.address, split])).toEqual([0n, splitUsdc + 1_000_000n]);
    expect(await balanceOf('eth', deposit.address)).toBe(0n);
  });
});

describe('deposit batch', () => {
  it('deploys what is new, sweeps every deposit, and reports one the token refuses, or burns gas on, without holding up the others', async () => {
    const { split } = await newSplit();
    const other = await newSplit();
    const token = await deployToken('usdc');
    const tokenAddress = await token.getAddress();
    const burner = await deployToken('burn-gas');
    const burnerAddress = await burner.getAddress();
    const deposits = [newDeposit(split), newDeposit(split), newDeposit(other.split), newDeposit(split), newDeposit(split), newDeposit(split)];
    const [a, b, c, frozen, burning, unpaid] = deposits;
    for (const deposit of [a, b, c, frozen]) await send(token, 'mint', deposit!.address, 1_000n);
    await send(burner, 'mint', burning!.address, 1_000n);
    await sendEth(c!.address, 77n);
    // One deposit was swept before, so it is deployed already; one USDC has frozen; one the burning token has.
    await send(factory, 'deployForwarder', b!.split, b!.key);
    await send(token, 'blacklist', frozen!.address);
    await send(burner, 'blacklist', burning!.address);

    const batch = [
      { ...a!, tokens: [tokenAddress] },
      { ...b!, tokens: [tokenAddress] },
      { ...c!, tokens: [tokenAddress, ZeroAddress] },
      { ...frozen!, tokens: [tokenAddress] },
      { ...burning!, tokens: [burnerAddress] },
      // No tokens named: deployed only.
      { ...unpaid!, tokens: [] },
    ];
    const receipt = await sweepMany(batch, stranger);
    expect(factoryEvents(receipt, 'ForwarderCreated')).toEqual([a, c, frozen, burning, unpaid].map((deposit) => [deposit!.address, deposit!.split, deposit!.key]));
    expect(factoryEvents(receipt, 'SweepFailed')).toEqual([[frozen!.address], [burning!.address]]);
    expect(await balances(token, [...[a, b, c, frozen].map((deposit) => deposit!.address), split, other.split])).toEqual([0n, 0n, 0n, 1_000n, 2_000n, 1_000n]);
    expect(await balances(burner, [burning!.address, split])).toEqual([1_000n, 0n]);
    expect(await balances('eth', [c!.address, other.split])).toEqual([0n, 77n]);
    // The gas-burning token took its deposit's allowance and no more.
    expect(receipt.gasUsed).toBeLessThan(1_000_000n);
    for (const deposit of deposits) expect(await provider.getCode(deposit!.address)).not.toBe('0x');

    // The same batch again: nothing new to deploy, nothing to move, the refused ones still reported.
    const again = await sweepMany(batch, stranger);
    expect(factoryEvents(again, 'ForwarderCreated')).toEqual([]);
    expect(factoryEvents(again, 'SweepFailed')).toEqual([[frozen!.address], [burning!.address]]);
    // Once the token lets it go, the next sweep moves it.
    await send(token, 'unBlacklist', frozen!.address);
    await sweepMany([{ ...frozen!, tokens: [tokenAddress] }], stranger);
    expect(await balances(token, [frozen!.address, split])).toEqual([0n, 3_000n]);
  });

  it('refuses a batch sent with too little gas to give each sweep its whole allowance, rather than report the deposits failed', async () => {
    const { split } = await newSplit();
    const deposit = newDeposit(split);
    await send(usdc, 'transfer', deposit.address, 1_000n);
    const batch = [[split, deposit.key, [local.usdc]]];
    // Enough to deploy the forwarder, short of the 200,000 its one token is allowed.
    expect(await revertName(factory.getFunction('sweepMany').staticCall(batch, { gasLimit: 250_000n }))).toBe('InsufficientGas');
    expect(await factory.getFunction('sweepMany').estimateGas(batch)).toBeGreaterThan(200_000n);
    const receipt = await sweepMany([{ ...deposit, tokens: [local.usdc] }]);
    expect(factoryEvents(receipt, 'SweepFailed')).toEqual([]);
    expect(await balanceOf(usdc, deposit.address)).toBe(0n);
  });
});

describe('deposit gas', () => {
  it('measures deploy-and-sweep of one USDC deposit, a sweep of a deployed one, and per-deposit gas in batches of 10 and 50', async () => {
    const { split } = await newSplit();
    const other = await newSplit();
    // The split holds USDC already, as a shop's split between distributions does.
    await send(usdc, 'transfer', split, 1n);
    const paid = async (count: number, to = split) => {
      const deposits = Array.from({ length: count }, () => newDeposit(to));
      for (const deposit of deposits) await send(usdc, 'transfer', deposit.address, 1_000_000n);
      return deposits.map((deposit) => ({ ...deposit, tokens: [local.usdc] }));
    };

    const [first] = await paid(1, other.split);
    const intoEmptySplit = (await sweepMany([first!])).gasUsed;
    const [one] = await paid(1);
    const deployAndSweep = (await sweepMany([one!])).gasUsed;
    await send(usdc, 'transfer', one!.address, 1_000_000n);
    const sweepDeployed = (await send(forwarderAt(one!.address), 'sweep', [local.usdc])).gasUsed;
    await send(usdc, 'transfer', one!.address, 1_000_000n);
    const sweepDeployedInBatch = (await sweepMany([one!])).gasUsed;
    const perDeposit = async (count: number) => {
      const deposits = await paid(count);
      const receipt = await sweepMany(deposits);
      expect(factoryEvents(receipt, 'ForwarderCreated')).toHaveLength(count);
      expect(await balanceOf(usdc, deposits[count - 1]!.address)).toBe(0n);
      return receipt.gasUsed / BigInt(count);
    };
    const [ten, fifty] = [await perDeposit(10), await perDeposit(50)];

    const figures = {
      'deploy + sweep, one USDC deposit (split already holds USDC)': deployAndSweep,
      'deploy + sweep, one USDC deposit (split holds no USDC yet)': intoEmptySplit,
      'sweep of a deployed forwarder, called directly': sweepDeployed,
      'sweep of a deployed forwarder, through sweepMany': sweepDeployedInBatch,
      'per deposit, batch of 10 (deploy + sweep)': ten,
      'per deposit, batch of 50 (deploy + sweep)': fifty,
    };
    console.log(`deposit gas:\n${Object.entries(figures).map(([what, gas]) => `  ${what}: ${gas}`).join('\n')}`);
    // Bounds that hold with room to spare: a regression that doubles the cost fails here.
    expect(deployAndSweep).toBeLessThan(150_000n);
    expect(sweepDeployed).toBeLessThan(60_000n);
    expect(fifty).toBeLessThan(deployAndSweep);
    // Two batches of 60 deposits and their funding: slow on a busy two-core machine.
  }, 180_000);
});
