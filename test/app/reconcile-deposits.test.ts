/**
 * Reconciling receipts paid at their deposit addresses, on the run's anvil chain: the relayer sweeps a
 * split's deposits (one `sweepMany` a batch, on the sweep budget) before it distributes, and only a
 * distribution after the sweep reconciles a receipt.
 */
import { Contract, ContractFactory, Interface, NonceManager, Wallet, ZeroAddress, hexlify, parseEther, randomBytes, type JsonRpcProvider } from 'ethers';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { depositFactoryArtifact, splitArtifact, testUsdcArtifact } from '../../shared/adapters/evm/artifacts';
import type { EvmChain } from '../../shared/adapters/evm/chain';
import { createProvider } from '../../shared/adapters/evm/provider';
import type { AppDeps } from '../../shared/app/deps';
import { reconcileSplits } from '../../shared/app/payments/reconcile';
import { SWEEP_RETRY_AFTER_MS, sweepFailureId } from '../../shared/app/payments/sweeps';
import { relayerBudgetId } from '../../shared/app/relayer-budget';
import { memoryDeps } from '../../shared/composition';
import type { PayTokenSymbol, Quote } from '../../shared/domain/payment';
import { newReceipt, type Receipt } from '../../shared/domain/receipt';
import type { Chain, DepositSweep } from '../../shared/ports/chain';
import { chainForTests } from '../support/chain';
import { testAccounts } from '../support/chain-merchant';
import { receiptCore } from '../support/fixtures';

const local = inject('chain');
const factoryInterface = new Interface(depositFactoryArtifact.abi);

let provider: JsonRpcProvider;
/** The relayer of this file: a fresh funded wallet, so no other file shares its nonces. */
let chain: EvmChain;
let buyer: NonceManager;
let stranger: NonceManager;
let usdc: Contract;
let deps: AppDeps;
let logged: string[];
let now: number;

beforeAll(async () => {
  provider = createProvider(local.rpcUrl, local.chainId);
  const accounts = await testAccounts(provider);
  chain = chainForTests((await accounts.newWallet()).privateKey);
  buyer = new NonceManager(await accounts.newWallet([local.usdc]));
  stranger = new NonceManager(await accounts.newWallet());
  usdc = new Contract(local.usdc, testUsdcArtifact.abi, buyer);
});
afterAll(() => {
  chain.destroy();
  provider.destroy();
});

/** The real adapter, with the relayer's sweeps and distributions counted. */
const counted = (base: Chain = chain) => {
  const sent = { sweeps: [] as Array<{ deposits: readonly DepositSweep[]; txHash: string; blockNumber: number; failed: string[] }>, distributions: [] as Array<{ txHash: string; blockNumber: number }> };
  const wrapped: Chain = Object.assign(Object.create(base) as Chain, {
    sweepDeposits: async (deposits: readonly DepositSweep[]) => {
      const result = await base.sweepDeposits(deposits);
      sent.sweeps.push({ deposits, ...result });
      return result;
    },
    distribute: async (split: string, token: string) => {
      const result = await base.distribute(split, token);
      sent.distributions.push(result);
      return result;
    },
  });
  return { chain: wrapped, sent };
};

let sent: ReturnType<typeof counted>['sent'];
const withRules = (rules: Partial<AppDeps['settings']['relayer']> = {}, used: Chain = chain) => {
  const wrapped = counted(used);
  sent = wrapped.sent;
  const base = memoryDeps({ chain: wrapped.chain, clock: { now: () => now } });
  deps = {
    ...base,
    settings: {
      ...base.settings,
      chainId: local.chainId,
      tokens: [{ symbol: 'USDC', address: local.usdc, decimals: 6 }],
      payments: { ...base.settings.payments, confirmations: 1 },
      relayer: { ...base.settings.relayer, ...rules },
    },
  };
};

beforeEach(() => {
  logged = [];
  now = Date.now();
  withRules();
});

const reconcile = () => reconcileSplits(deps, { log: (message) => logged.push(message) });

const randomAddress = () => Wallet.createRandom().address.toLowerCase();

/** A shop of its own for each test: its wallet and a split paying the merchant 9,850 bps, the platform 100 and a partner 50. */
const newShop = async () => {
  const payees = [
    { address: randomAddress(), bps: 9_850 },
    { address: randomAddress(), bps: 100 },
    { address: randomAddress(), bps: 50 },
  ];
  const deployed = await chain.deploySplit(payees);
  return { wallet: randomAddress(), split: deployed.address, payees };
};
type Shop = Awaited<ReturnType<typeof newShop>>;

const balanceOf = async (token: Contract | 'eth', holder: string): Promise<bigint> =>
  token === 'eth' ? provider.getBalance(holder) : (token.getFunction('balanceOf').staticCall(holder) as Promise<bigint>);

const mined = async (send: Promise<{ wait(): Promise<{ hash: string; blockNumber: number } | null> }>) => {
  const receipt = (await (await send).wait())!;
  return { hash: receipt.hash.toLowerCase(), blockNumber: receipt.blockNumber };
};

/**
 * A receipt of `shop` paid at its deposit address, as verification leaves it: its quote to the
 * address, the payment on record. The buyer pays `amount` of `token` (test USDC unless named; `eth`).
 */
const paidAtDeposit = async (shop: Shop, amount: bigint, token: Contract | 'eth' = usdc): Promise<Receipt & { deposit: { address: string; split: string } }> => {
  const receiptId = `R-${hexlify(randomBytes(8)).slice(2).toUpperCase()}`;
  const address = (await chain.depositAddress(shop.split, shop.wallet, receiptId))!;
  const payment =
    token === 'eth'
      ? await mined(buyer.sendTransaction({ to: address, value: amount }))
      : await mined(token.connect(buyer).getFunction('transfer').send(address, amount) as Promise<{ wait(): Promise<{ hash: string; blockNumber: number } | null> }>);
  const symbol: PayTokenSymbol = token === 'eth' ? 'ETH' : 'USDC';
  const tokenAddress = token === 'eth' ? null : ((await token.getAddress()) as string).toLowerCase();
  const usd = token === 'eth' ? 3 : Number(amount / 10_000n) / 100;
  const quote: Quote = {
    quoteId: `q_${hexlify(randomBytes(4))}`,
    token: symbol,
    tokenAddress,
    chainId: local.chainId,
    payTo: address,
    amount: amount.toString(),
    decimals: token === 'eth' ? 18 : 6,
    usd,
    rate: token === 'eth' ? 3000 : 1,
    createdAt: now - 60_000,
    expiresAt: now + 540_000,
    uri: 'ethereum:…',
  };
  const payer = (await buyer.getAddress()).toLowerCase();
  const receipt = newReceipt(receiptCore({ receiptId, wallet: shop.wallet, status: 'paid', usd }), now - 120_000, {
    quotes: [quote],
    deposit: { address, split: shop.split },
    payments: [{ txHash: payment.hash, token: symbol, payer, amount: amount.toString(), expected: amount.toString(), blockNumber: payment.blockNumber, outcome: 'paid', at: now }],
    token: symbol,
    transactionHash: payment.hash,
    buyerWallet: payer,
    amountPaid: amount.toString(),
    paidAt: now,
  });
  await deps.receipts.create(shop.wallet, receipt);
  return receipt as Receipt & { deposit: { address: string; split: string } };
};

const stored = async (receipt: Receipt) => (await deps.receipts.get(receipt.wallet, receipt.receiptId))!.value;

/** The factory's events of `name` in a transaction, their first argument (the forwarder) lower-case. */
const factoryEvents = async (txHash: string, name: string) =>
  (await provider.getTransactionReceipt(txHash))!.logs
    .filter((log) => log.address.toLowerCase() === local.depositFactory)
    .map((log) => factoryInterface.parseLog(log))
    .filter((event) => event?.name === name)
    .map((event) => (event!.args[0] as string).toLowerCase());

const gasOf = async (txHash: string) => (await provider.getTransactionReceipt(txHash))!.gasUsed;

describe('reconcileSplits with deposit addresses', () => {
  it('sweeps a receipt paid at its deposit address into the split, distributes it and reconciles it with the distribution; the payees get their shares', async () => {
    const shop = await newShop();
    const receipt = await paidAtDeposit(shop, 12_345_678n);
    expect(await balanceOf(usdc, receipt.deposit.address)).toBe(12_345_678n);

    const report = await reconcile();
    expect(sent.sweeps).toHaveLength(1);
    expect(sent.distributions).toHaveLength(1);
    const [sweep] = sent.sweeps;
    const [distribution] = sent.distributions;
    expect(sweep!.deposits).toEqual([{ split: shop.split, wallet: shop.wallet, receiptId: receipt.receiptId, tokens: [local.usdc] }]);
    expect(sweep!.failed).toEqual([]);
    expect(await factoryEvents(sweep!.txHash, 'ForwarderCreated')).toEqual([receipt.deposit.address]);
    // The money reached the split first; the distribution that paid it out came after.
    expect(distribution!.blockNumber).toBeGreaterThan(sweep!.blockNumber);
    const hash = distribution!.txHash.toLowerCase();
    expect(report).toEqual({ reconciled: [{ receiptId: receipt.receiptId, txHash: hash }], waiting: [], skipped: [] });
    expect(await stored(receipt)).toMatchObject({ status: 'reconciled', reconciledTxHash: hash });

    const platform = (12_345_678n * 100n) / 10_000n;
    const partner = (12_345_678n * 50n) / 10_000n;
    expect(await balanceOf(usdc, shop.payees[1]!.address)).toBe(platform);
    expect(await balanceOf(usdc, shop.payees[2]!.address)).toBe(partner);
    expect(await balanceOf(usdc, shop.payees[0]!.address)).toBe(12_345_678n - platform - partner);
    expect(await Promise.all([balanceOf(usdc, receipt.deposit.address), balanceOf(usdc, shop.split)])).toEqual([0n, 0n]);
    console.log(`reconcile gas, one USDC deposit: sweep ${await gasOf(sweep!.txHash)}, distribution ${await gasOf(distribution!.txHash)}`);

    // Nothing is left paid: the next run sends nothing.
    expect(await reconcile()).toEqual({ reconciled: [], waiting: [], skipped: [] });
    expect(sent.sweeps).toHaveLength(1);
  });

  it('sweeps several receipts of one shop, in USDC and ETH, in one transaction, then distributes each token once', async () => {
    const shop = await newShop();
    const receipts = [await paidAtDeposit(shop, 1_000_001n), await paidAtDeposit(shop, 2_000_002n), await paidAtDeposit(shop, parseEther('0.001'), 'eth'), await paidAtDeposit(shop, 3_000_003n)];

    const report = await reconcile();
    expect(sent.sweeps).toHaveLength(1);
    const [sweep] = sent.sweeps;
    const byId = (a: [string, unknown], b: [string, unknown]) => (a[0] < b[0] ? -1 : 1);
    expect(sweep!.deposits.map((deposit): [string, unknown] => [deposit.receiptId, deposit.tokens]).sort(byId)).toEqual(
      receipts.map((receipt): [string, unknown] => [receipt.receiptId, receipt.token === 'ETH' ? [ZeroAddress] : [local.usdc]]).sort(byId),
    );
    expect((await factoryEvents(sweep!.txHash, 'ForwarderCreated')).sort()).toEqual(receipts.map((receipt) => receipt.deposit.address).sort());
    expect(sent.distributions).toHaveLength(2);
    expect(report.skipped).toEqual([]);
    expect(report.reconciled.map((entry) => entry.receiptId).sort()).toEqual(receipts.map((receipt) => receipt.receiptId).sort());
    for (const receipt of receipts) {
      const reconciled = await stored(receipt);
      expect(reconciled.status).toBe('reconciled');
      const distribution = sent.distributions.find((candidate) => candidate.txHash.toLowerCase() === reconciled.reconciledTxHash);
      expect(distribution!.blockNumber).toBeGreaterThan(sweep!.blockNumber);
    }
    const usdcTotal = 6_000_006n;
    expect(await balanceOf(usdc, shop.payees[1]!.address)).toBe((usdcTotal * 100n) / 10_000n);
    expect(await balanceOf('eth', shop.payees[1]!.address)).toBe((parseEther('0.001') * 100n) / 10_000n);
    expect(await balanceOf('eth', receipts[2]!.deposit.address)).toBe(0n);
    console.log(`reconcile gas, one sweep of 4 deposits (3 USDC, 1 ETH): ${await gasOf(sweep!.txHash)}`);
  });

  it('uses a sweep someone else sent, sending none, and reconciles only with a distribution after that sweep', async () => {
    const shop = await newShop();
    const receipt = await paidAtDeposit(shop, 4_000_004n);
    // The split holds other money, which a stranger distributes after the payment but before the sweep.
    await mined(usdc.getFunction('transfer').send(shop.split, 1_000_000n));
    const split = new Contract(shop.split, splitArtifact.abi, stranger);
    const early = await mined(split.getFunction('distribute').send(local.usdc) as Promise<{ wait(): Promise<{ hash: string; blockNumber: number } | null> }>);
    // The stranger sweeps the deposit with the call the merchant's console hands out.
    const call = await chain.sweepCall([{ split: shop.split, wallet: shop.wallet, receiptId: receipt.receiptId, tokens: [local.usdc] }]);
    expect(call.to).toBe(local.depositFactory);
    const swept = await mined(stranger.sendTransaction(call));
    expect(await balanceOf(usdc, shop.split)).toBe(4_000_004n);

    const report = await reconcile();
    expect(sent.sweeps).toEqual([]);
    expect(sent.distributions).toHaveLength(1);
    const ours = sent.distributions[0]!;
    expect(ours.blockNumber).toBeGreaterThan(swept.blockNumber);
    expect(report).toEqual({ reconciled: [{ receiptId: receipt.receiptId, txHash: ours.txHash.toLowerCase() }], waiting: [], skipped: [] });
    expect((await stored(receipt)).reconciledTxHash).not.toBe(early.hash);

    // Swept and distributed by others: the relayer sends nothing and uses their distribution.
    const other = await paidAtDeposit(shop, 5_000_005n);
    await mined(stranger.sendTransaction(await chain.sweepCall([{ split: shop.split, wallet: shop.wallet, receiptId: other.receiptId, tokens: [local.usdc] }])));
    const theirs = await mined(split.getFunction('distribute').send(local.usdc) as Promise<{ wait(): Promise<{ hash: string; blockNumber: number } | null> }>);
    expect(await reconcile()).toEqual({ reconciled: [{ receiptId: other.receiptId, txHash: theirs.hash }], waiting: [], skipped: [] });
    expect(sent.sweeps).toEqual([]);
    expect(sent.distributions).toHaveLength(1);
  });

  it('a sweep that fails for one deposit (its token froze the address) does not stop the others; that deposit waits a day before the relayer pays for it again', async () => {
    const shop = await newShop();
    // A USDC of this test's own, so it may freeze an address.
    const deployed = await new ContractFactory(testUsdcArtifact.abi, testUsdcArtifact.bytecode, stranger).deploy();
    await deployed.waitForDeployment();
    const token = new Contract((await deployed.getAddress()).toLowerCase(), testUsdcArtifact.abi, stranger);
    await mined(token.getFunction('mint').send(await buyer.getAddress(), 100_000_000n) as Promise<{ wait(): Promise<{ hash: string; blockNumber: number } | null> }>);
    const frozen = await paidAtDeposit(shop, 1_000_000n, token);
    const fine = await paidAtDeposit(shop, 2_000_000n, token);
    const alsoFine = await paidAtDeposit(shop, 3_000_000n);
    await mined(token.getFunction('blacklist').send(frozen.deposit.address) as Promise<{ wait(): Promise<{ hash: string; blockNumber: number } | null> }>);

    const report = await reconcile();
    expect(sent.sweeps).toHaveLength(1);
    expect(sent.sweeps[0]!.failed).toEqual([frozen.deposit.address]);
    expect(report.reconciled.map((entry) => entry.receiptId).sort()).toEqual([fine.receiptId, alsoFine.receiptId].sort());
    expect(report.skipped).toEqual([{ receiptId: frozen.receiptId, reason: expect.stringMatching(/^the sweep of its deposit address failed \(SweepFailed in 0x[0-9a-f]{64}: .*swept again after /) }]);
    expect((await stored(frozen)).status).toBe('paid');
    expect(await balanceOf(token, frozen.deposit.address)).toBe(1_000_000n);
    expect(await balanceOf(token, shop.payees[1]!.address)).toBe((2_000_000n * 100n) / 10_000n);
    const failureId = sweepFailureId(local.chainId, frozen.deposit.address);
    expect((await deps.claims.get(failureId, failureId))?.value).toMatchObject({ expiresAt: now + SWEEP_RETRY_AFTER_MS });

    // The next run sends nothing for it: skipped with when it is tried again.
    const again = await reconcile();
    expect(again.skipped).toEqual([{ receiptId: frozen.receiptId, reason: expect.stringMatching(/last sweep of its deposit address .* failed \(SweepFailed\): tried again after /) }]);
    expect(sent.sweeps).toHaveLength(1);

    // Once the token lets it go and the day has passed, it is swept and reconciled.
    await mined(token.getFunction('unBlacklist').send(frozen.deposit.address) as Promise<{ wait(): Promise<{ hash: string; blockNumber: number } | null> }>);
    now += SWEEP_RETRY_AFTER_MS + 1;
    const later = await reconcile();
    expect(sent.sweeps).toHaveLength(2);
    expect(later.reconciled.map((entry) => entry.receiptId)).toEqual([frozen.receiptId]);
    expect(await balanceOf(token, frozen.deposit.address)).toBe(0n);
  });

  it('sends no sweep once the day’s SWEEP_DAILY_BUDGET is spent (one unit a sweep transaction): the receipts stay paid, skipped with the reason, and nothing is distributed for them', async () => {
    withRules({ sweepsPerDay: 1 });
    const shop = await newShop();
    const first = [await paidAtDeposit(shop, 1_000_001n), await paidAtDeposit(shop, 1_000_002n)];
    expect((await reconcile()).reconciled).toHaveLength(2);
    expect(sent.sweeps).toHaveLength(1);
    const budgetId = relayerBudgetId('sweep', now);
    expect((await deps.claims.get(budgetId, budgetId))?.value.owner).toBe('1');

    const late = await paidAtDeposit(shop, 1_000_003n);
    const reason = "the relayer's deposit sweeps for today are spent (SWEEP_DAILY_BUDGET): the sweep waits for the next UTC day (the merchant may sweep from the console)";
    expect(await reconcile()).toEqual({ reconciled: [], waiting: [], skipped: [{ receiptId: late.receiptId, reason }] });
    expect(sent.sweeps).toHaveLength(1);
    expect(sent.distributions).toHaveLength(1);
    expect(await balanceOf(usdc, late.deposit.address)).toBe(1_000_003n);
    expect(logged.join('\n')).toContain(`${late.receiptId} left paid: ${reason}`);

    // The next UTC day has a budget of its own.
    now += 24 * 3_600_000;
    expect((await reconcile()).reconciled.map((entry) => entry.receiptId)).toEqual([late.receiptId]);
    expect(sent.sweeps).toHaveLength(2);
  });

  it('a budget of 0 sweeps nothing; a sweep transaction that fails gives its unit back', async () => {
    withRules({ sweepsPerDay: 0 });
    const shop = await newShop();
    const receipt = await paidAtDeposit(shop, 2_000_001n);
    expect((await reconcile()).skipped).toEqual([{ receiptId: receipt.receiptId, reason: expect.stringContaining('SWEEP_DAILY_BUDGET') }]);
    expect(sent.sweeps).toEqual([]);

    const failing: Chain = Object.assign(Object.create(chain) as Chain, {
      sweepDeposits: async () => {
        throw Object.assign(new Error('execution reverted'), { code: 'CALL_EXCEPTION' });
      },
    });
    const { receipts } = deps;
    withRules({ sweepsPerDay: 1 }, failing);
    deps = { ...deps, receipts };
    expect((await reconcile()).skipped).toEqual([{ receiptId: receipt.receiptId, reason: 'sweep failed: execution reverted' }]);
    const budgetId = relayerBudgetId('sweep', now);
    expect((await deps.claims.get(budgetId, budgetId))?.value.owner).toBe('0');
  });

  it('with DISTRIBUTE_MIN_USDC, counts what waits at the deposits with the split: below it nothing is swept; crossing it sweeps them together', async () => {
    withRules({ distributeMin: { USDC: 5_000_000n, USDT: 0n, ETH: 0n } });
    const shop = await newShop();
    await mined(usdc.getFunction('transfer').send(shop.split, 1_000_000n));
    const first = await paidAtDeposit(shop, 3_000_000n);
    expect(await reconcile()).toEqual({
      reconciled: [],
      waiting: [],
      skipped: [{ receiptId: first.receiptId, reason: 'the split holds 1 USDC and its deposit addresses 3 USDC, below the 5 USDC the relayer distributes from (DISTRIBUTE_MIN_USDC): their sweep and distribution wait' }],
    });
    expect(sent.sweeps).toEqual([]);

    const second = await paidAtDeposit(shop, 1_000_000n);
    const report = await reconcile();
    expect(sent.sweeps).toHaveLength(1);
    expect(sent.sweeps[0]!.deposits.map((deposit) => deposit.receiptId).sort()).toEqual([first.receiptId, second.receiptId].sort());
    expect(report.reconciled.map((entry) => entry.receiptId).sort()).toEqual([first.receiptId, second.receiptId].sort());
    expect(await balanceOf(usdc, shop.split)).toBe(0n);
  });

  it('keeps today’s rule for a receipt paid into the split itself (no deposit) beside receipts paid at deposits', async () => {
    const shop = await newShop();
    const direct = await paidAtDeposit(shop, 1_500_000n);
    // The same receipt as if its quote had named the split: paid there directly, no deposit address.
    const payment = await mined(usdc.getFunction('transfer').send(shop.split, 1_500_000n));
    const { deposit: _, ...rest } = direct;
    const old: Receipt = {
      ...rest,
      quotes: direct.quotes!.map((quote) => ({ ...quote, payTo: shop.split })),
      payments: direct.payments!.map((record) => ({ ...record, txHash: payment.hash, blockNumber: payment.blockNumber })),
      transactionHash: payment.hash,
    };
    await deps.receipts.replace(shop.wallet, old, (await deps.receipts.get(shop.wallet, direct.receiptId))!.etag);
    const atDeposit = await paidAtDeposit(shop, 2_500_000n);

    const report = await reconcile();
    expect(sent.sweeps.map((sweep) => sweep.deposits.map((deposit) => deposit.receiptId))).toEqual([[atDeposit.receiptId]]);
    expect(report.reconciled.map((entry) => entry.receiptId).sort()).toEqual([direct.receiptId, atDeposit.receiptId].sort());
    // The deposit address the direct receipt was given still holds its unswept money: not the receipt's payment, and not swept by the relayer.
    expect(await balanceOf(usdc, direct.deposit.address)).toBe(1_500_000n);
  });
});
