import { receiptCore } from '../support/fixtures';
import { Contract, NonceManager, Wallet, hexlify, randomBytes, type JsonRpcProvider } from 'ethers';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { splitArtifact, testUsdcArtifact } from '../../shared/adapters/evm/artifacts';
import type { EvmChain } from '../../shared/adapters/evm/chain';
import { createProvider } from '../../shared/adapters/evm/provider';
import type { AppDeps } from '../../shared/app/deps';
import { distributionRecordId, reconcileSplits, type DistributionRecord } from '../../shared/app/payments/reconcile';
import { memoryDeps } from '../../shared/composition';
import type { Quote } from '../../shared/domain/payment';
import { newReceipt, type Receipt } from '../../shared/domain/receipt';
import type { Chain } from '../../shared/ports/chain';
import { chainForTests } from '../support/chain';

const local = inject('chain');
// The relayer of this file: anvil account 3, which no other test file sends from on the run's chain.
const RELAYER_ACCOUNT = 3;
const merchantWallet = '0x' + 'a1'.repeat(20);

let provider: JsonRpcProvider;
let chain: EvmChain;
let payer: NonceManager;
let usdc: Contract;
let deps: AppDeps;
let logged: string[];

beforeAll(async () => {
  provider = createProvider(local.rpcUrl, local.chainId);
  chain = chainForTests(RELAYER_ACCOUNT);
  // The buyer: a fresh account of this file's own, given gas money and test USDC.
  const buyer = Wallet.createRandom().connect(provider);
  await provider.send('anvil_setBalance', [buyer.address, '0x56BC75E2D63100000']);
  payer = new NonceManager(buyer);
  usdc = new Contract(local.usdc, testUsdcArtifact.abi, payer);
  await (await usdc.getFunction('mint').send(buyer.address, 1_000_000_000_000n)).wait();
});
afterAll(() => {
  chain.destroy();
  provider.destroy();
});

const withChain = (used: Chain, confirmations = 1) => {
  const base = memoryDeps({ chain: used });
  deps = { ...base, settings: { ...base.settings, chainId: local.chainId, payments: { ...base.settings.payments, confirmations } } };
};

beforeEach(() => {
  logged = [];
  withChain(chain);
});

const reconcile = () => reconcileSplits(deps, { log: (message) => logged.push(message) });

const randomAddress = () => Wallet.createRandom().address.toLowerCase();

/** A split of its own for each test: the merchant, the platform and a partner, fresh addresses holding nothing. */
const newSplit = async () => {
  const payees = [
    { address: randomAddress(), bps: 9_850 },
    { address: randomAddress(), bps: 100 },
    { address: randomAddress(), bps: 50 },
  ];
  const deployed = await chain.deploySplit(payees);
  return { address: deployed.address, payees };
};

const balanceOf = async (address: string): Promise<bigint> => usdc.getFunction('balanceOf').staticCall(address);

/** The buyer pays `amount` of test USDC into the split. */
const pay = async (split: string, amount: bigint) => {
  const mined = await (await usdc.getFunction('transfer').send(split, amount)).wait();
  return { hash: mined!.hash.toLowerCase(), blockNumber: mined!.blockNumber };
};

/** A receipt as payment verification leaves it when `payment` paid it into `split`. */
const paidReceipt = async (split: string, amount: bigint, payment: { hash: string; blockNumber: number }): Promise<Receipt> => {
  const now = Date.now();
  const usd = Number(amount / 10_000n) / 100;
  const quote: Quote = {
    quoteId: `q_${hexlify(randomBytes(4))}`,
    token: 'USDC',
    tokenAddress: local.usdc,
    chainId: local.chainId,
    payTo: split,
    amount: amount.toString(),
    decimals: 6,
    usd,
    rate: 1,
    createdAt: now - 60_000,
    expiresAt: now + 540_000,
    uri: 'ethereum:…',
  };
  const receipt = newReceipt(
    receiptCore({ receiptId: `R-${hexlify(randomBytes(8)).slice(2).toUpperCase()}`, wallet: merchantWallet, status: 'paid', usd }),
    now - 120_000,
    {
      quotes: [quote],
      payments: [{ txHash: payment.hash, token: 'USDC', payer: (await payer.getAddress()).toLowerCase(), amount: amount.toString(), expected: amount.toString(), blockNumber: payment.blockNumber, outcome: 'paid', at: now }],
      token: 'USDC',
      transactionHash: payment.hash,
      buyerWallet: (await payer.getAddress()).toLowerCase(),
      amountPaid: amount.toString(),
      paidAt: now,
    },
  );
  await deps.receipts.create(merchantWallet, receipt);
  return receipt;
};

const stored = async (receipt: Receipt) => (await deps.receipts.get(merchantWallet, receipt.receiptId))!.value;

/** The real adapter, with its calls to `distribute` counted and, when `cap` is set, the head it reports held at most there. */
const controlled = () => {
  const state = { distributions: [] as Array<{ txHash: string; blockNumber: number }>, cap: undefined as number | undefined, capAtDistribution: false };
  const wrapped: Chain = Object.assign(Object.create(chain) as EvmChain, {
    distribute: async (split: string, token: string) => {
      const sent = await chain.distribute(split, token);
      state.distributions.push(sent);
      if (state.capAtDistribution) state.cap = sent.blockNumber;
      return sent;
    },
    blockNumber: async () => {
      const head = await chain.blockNumber();
      return state.cap === undefined ? head : Math.min(head, state.cap);
    },
  });
  return { chain: wrapped, state };
};

describe('reconcileSplits on the local chain', () => {
  it('distributes a split holding two paid receipts and reconciles both with the distribution’s hash; the payees get their shares', async () => {
    const split = await newSplit();
    const first = await paidReceipt(split.address, 52_020_001n, await pay(split.address, 52_020_001n));
    const second = await paidReceipt(split.address, 10_000_002n, await pay(split.address, 10_000_002n));

    const report = await reconcile();
    const hash = report.reconciled[0]?.txHash;
    expect(hash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(report).toEqual({
      reconciled: [
        { receiptId: first.receiptId, txHash: hash },
        { receiptId: second.receiptId, txHash: hash },
      ],
      waiting: [],
      skipped: [],
    });
    for (const receipt of [first, second]) {
      expect(await stored(receipt)).toMatchObject({ status: 'reconciled', previousStatus: 'paid', reconciledTxHash: hash });
      expect((await stored(receipt)).statusHistory.at(-1)).toMatchObject({ status: 'reconciled', by: 'service' });
    }

    // The payees' balances on chain: every share but the merchant's rounded down, the merchant the rest.
    const total = 52_020_001n + 10_000_002n;
    const platform = (total * 100n) / 10_000n;
    const partner = (total * 50n) / 10_000n;
    expect(await balanceOf(split.payees[1]!.address)).toBe(platform);
    expect(await balanceOf(split.payees[2]!.address)).toBe(partner);
    expect(await balanceOf(split.payees[0]!.address)).toBe(total - platform - partner);
    expect(await balanceOf(split.address)).toBe(0n);
    // The hash is the transaction that paid them out.
    const distributed = (await chain.splitTransfers(split.address, { fromBlock: 0, toBlock: await chain.blockNumber() })).filter((transfer) => transfer.kind === 'distribution');
    expect(new Set(distributed.map((transfer) => transfer.txHash.toLowerCase()))).toEqual(new Set([hash]));
    expect(distributed.map((transfer) => [transfer.to, BigInt(transfer.amount)])).toEqual([
      [split.payees[0]!.address, total - platform - partner],
      [split.payees[1]!.address, platform],
      [split.payees[2]!.address, partner],
    ]);
    expect(await deps.claims.get(distributionRecordId(local.chainId, split.address, local.usdc), distributionRecordId(local.chainId, split.address, local.usdc))).toBeUndefined();

    // Nothing is left paid: the next run sends nothing.
    expect(await reconcile()).toEqual({ reconciled: [], waiting: [], skipped: [] });
  });

  it('leaves a receipt paid after the distribution’s block paid until the next run; a kept distribution is finished by a later run', async () => {
    const { chain: wrapped, state } = controlled();
    withChain(wrapped, 2);
    const split = await newSplit();
    const early = await paidReceipt(split.address, 3_000_001n, await pay(split.address, 3_000_001n));

    // Run 1: the distribution is mined but has 1 of 2 confirmations: kept, nothing reconciled.
    state.capAtDistribution = true;
    expect(await reconcile()).toEqual({ reconciled: [], waiting: [early.receiptId], skipped: [] });
    const [first] = state.distributions;
    const recordId = distributionRecordId(local.chainId, split.address, local.usdc);
    expect((await deps.claims.get(recordId, recordId))?.value).toMatchObject({ txHash: first!.txHash.toLowerCase(), blockNumber: first!.blockNumber, empty: false } satisfies Partial<DistributionRecord>);
    expect((await stored(early)).status).toBe('paid');

    // A payment after the distribution's block.
    const latePayment = await pay(split.address, 4_000_002n);
    expect(latePayment.blockNumber).toBeGreaterThan(first!.blockNumber);
    const late = await paidReceipt(split.address, 4_000_002n, latePayment);

    // Run 2: the kept distribution has its confirmations: the early receipt is reconciled with it, the late one is
    // not (its money arrived after); a new distribution for it waits for its own confirmations.
    state.cap = latePayment.blockNumber;
    expect(await reconcile()).toEqual({ reconciled: [{ receiptId: early.receiptId, txHash: first!.txHash.toLowerCase() }], waiting: [late.receiptId], skipped: [] });
    expect(await stored(early)).toMatchObject({ status: 'reconciled', reconciledTxHash: first!.txHash.toLowerCase() });
    expect((await stored(late)).status).toBe('paid');
    expect(state.distributions).toHaveLength(2);
    const second = state.distributions[1]!;
    expect(second.blockNumber).toBeGreaterThan(latePayment.blockNumber);

    // Run 3, with another block: the late receipt is reconciled with the second distribution, and nothing more is sent.
    state.capAtDistribution = false;
    state.cap = undefined;
    await provider.send('anvil_mine', ['0x1']);
    expect(await reconcile()).toEqual({ reconciled: [{ receiptId: late.receiptId, txHash: second.txHash.toLowerCase() }], waiting: [], skipped: [] });
    expect(state.distributions).toHaveLength(2);
    expect(await deps.claims.get(recordId, recordId)).toBeUndefined();
    expect(await balanceOf(split.payees[1]!.address)).toBe((3_000_001n * 100n) / 10_000n + (4_000_002n * 100n) / 10_000n);
  });

  it('uses a distribution someone else made after the payment (anyone may call distribute), sending none', async () => {
    const { chain: wrapped, state } = controlled();
    withChain(wrapped);
    const split = await newSplit();
    const receipt = await paidReceipt(split.address, 7_000_003n, await pay(split.address, 7_000_003n));
    const contract = new Contract(split.address, splitArtifact.abi, payer);
    const theirs = (await (await contract.getFunction('distribute').send(local.usdc)).wait())!.hash.toLowerCase();

    expect(await reconcile()).toEqual({ reconciled: [{ receiptId: receipt.receiptId, txHash: theirs }], waiting: [], skipped: [] });
    expect(state.distributions).toEqual([]);
    expect(await stored(receipt)).toMatchObject({ status: 'reconciled', reconciledTxHash: theirs });
  });

  it('finds the distribution when the relayer’s own moved nothing, by the Distributed log at or after the payment', async () => {
    const { chain: wrapped, state } = controlled();
    withChain(wrapped);
    const split = await newSplit();
    const payment = await pay(split.address, 2_000_001n);
    const contract = new Contract(split.address, splitArtifact.abi, payer);
    const mined = (await (await contract.getFunction('distribute').send(local.usdc)).wait())!;
    // As if the payment and someone's distribution had been mined in one block, the payment first.
    const receipt = await paidReceipt(split.address, 2_000_001n, { hash: payment.hash, blockNumber: mined.blockNumber });

    expect(await reconcile()).toEqual({ reconciled: [{ receiptId: receipt.receiptId, txHash: mined.hash.toLowerCase() }], waiting: [], skipped: [] });
    expect(state.distributions).toHaveLength(1);
  });

  it('skips, with a log and without throwing or sending again, receipts whose split has nothing to distribute and no distribution after the payment', async () => {
    const { chain: wrapped, state } = controlled();
    withChain(wrapped);
    const split = await newSplit();
    // Recorded as paid into the split, but nothing reached it.
    const head = await chain.blockNumber();
    const receipt = await paidReceipt(split.address, 5_000_000n, { hash: hexlify(randomBytes(32)), blockNumber: head });

    const first = await reconcile();
    expect(first.reconciled).toEqual([]);
    expect(first.skipped).toEqual([{ receiptId: receipt.receiptId, reason: expect.stringMatching(/nothing to distribute/) }]);
    expect(logged.join('\n')).toMatch(new RegExp(`${receipt.receiptId}.*nothing to distribute`));
    expect(state.distributions).toHaveLength(1);

    for (let run = 0; run < 3; run++) {
      const again = await reconcile();
      expect(again.skipped.map((skipped) => skipped.receiptId)).toEqual([receipt.receiptId]);
    }
    expect(state.distributions).toHaveLength(1);
    expect((await stored(receipt)).status).toBe('paid');

    // A real payment later: that one is distributed and reconciled; the stuck one is still not sent for on its own.
    const later = await paidReceipt(split.address, 1_000_001n, await pay(split.address, 1_000_001n));
    const report = await reconcile();
    expect(report.reconciled.map((entry) => entry.receiptId)).toEqual([later.receiptId]);
    expect(state.distributions).toHaveLength(2);
  });

  it('skips a paid receipt with no payment on record, and one without a chain does nothing', async () => {
    const receipt = newReceipt(
      { receiptId: 'R-NOPAYMENT', wallet: merchantWallet, brandKey: 'default', brandName: 'Test', status: 'paid', lineItems: [], totalUsd: 1, customerTotalUsd: 1, jurisdictionCode: null, taxRate: null, source: 'api', createdBy: null },
      Date.now(),
    );
    await deps.receipts.create(merchantWallet, receipt);
    expect(await reconcile()).toEqual({ reconciled: [], waiting: [], skipped: [{ receiptId: 'R-NOPAYMENT', reason: 'no paying transaction is recorded' }] });
    expect(await reconcileSplits({ ...deps, chain: undefined })).toEqual({ reconciled: [], waiting: [], skipped: [] });
  });
});

describe("reconcileSplits within the relayer's gas rules", () => {
  const usdcToken = { symbol: 'USDC' as const, address: local.usdc.toLowerCase(), decimals: 6 };
  /** The local chain (`controlled`), the local USDC configured, and the relayer's rules as given. */
  const withRules = (rules: Partial<AppDeps['settings']['relayer']>, distributeMinUsdc = 0n) => {
    const { chain: wrapped, state } = controlled();
    withChain(wrapped);
    const relayer = { ...deps.settings.relayer, ...rules, distributeMin: { ...deps.settings.relayer.distributeMin, USDC: distributeMinUsdc } };
    deps = { ...deps, settings: { ...deps.settings, tokens: [usdcToken], relayer } };
    return state;
  };

  it('leaves a split below DISTRIBUTE_MIN_USDC undistributed, its receipts paid and skipped with the reason, run after run; crossing it distributes them all', async () => {
    const state = withRules({}, 5_000_000n);
    const split = await newSplit();
    const first = await paidReceipt(split.address, 3_000_000n, await pay(split.address, 3_000_000n));

    for (let run = 0; run < 2; run++) {
      expect(await reconcile()).toEqual({
        reconciled: [],
        waiting: [],
        skipped: [{ receiptId: first.receiptId, reason: 'the split holds 3 USDC, below the 5 USDC the relayer distributes from (DISTRIBUTE_MIN_USDC): its distribution waits' }],
      });
    }
    expect(state.distributions).toEqual([]);
    expect((await stored(first)).status).toBe('paid');
    expect(await balanceOf(split.address)).toBe(3_000_000n);
    expect(logged.join('\n')).toMatch(new RegExp(`${first.receiptId} left paid: the split holds 3 USDC`));

    // 3 + 2.5 USDC: over the threshold, one distribution reconciles both.
    const second = await paidReceipt(split.address, 2_500_000n, await pay(split.address, 2_500_000n));
    const report = await reconcile();
    expect(state.distributions).toHaveLength(1);
    const hash = state.distributions[0]!.txHash.toLowerCase();
    expect(report).toEqual({ reconciled: [{ receiptId: first.receiptId, txHash: hash }, { receiptId: second.receiptId, txHash: hash }], waiting: [], skipped: [] });
    expect(await balanceOf(split.address)).toBe(0n);
    expect(await stored(second)).toMatchObject({ status: 'reconciled', reconciledTxHash: hash });
  });

  it('distributes at exactly the threshold', async () => {
    const state = withRules({}, 5_000_000n);
    const split = await newSplit();
    const receipt = await paidReceipt(split.address, 5_000_000n, await pay(split.address, 5_000_000n));
    expect((await reconcile()).reconciled.map((entry) => entry.receiptId)).toEqual([receipt.receiptId]);
    expect(state.distributions).toHaveLength(1);
  });

  it('with a threshold, a split emptied by a distribution in the payment’s own block is matched to it without sending one', async () => {
    const state = withRules({}, 5_000_000n);
    const split = await newSplit();
    const payment = await pay(split.address, 6_000_001n);
    const contract = new Contract(split.address, splitArtifact.abi, payer);
    const mined = (await (await contract.getFunction('distribute').send(local.usdc)).wait())!;
    // As if the payment and someone's distribution had been mined in one block, the payment first.
    const receipt = await paidReceipt(split.address, 6_000_001n, { hash: payment.hash, blockNumber: mined.blockNumber });

    expect(await reconcile()).toEqual({ reconciled: [{ receiptId: receipt.receiptId, txHash: mined.hash.toLowerCase() }], waiting: [], skipped: [] });
    expect(state.distributions).toEqual([]);
  });

  it('sends no distribution once the day’s DISTRIBUTION_DAILY_BUDGET is spent: the receipts stay paid, skipped with the reason', async () => {
    const state = withRules({ distributionsPerDay: 1 });
    const one = await newSplit();
    const other = await newSplit();
    const first = await paidReceipt(one.address, 1_000_001n, await pay(one.address, 1_000_001n));
    const second = await paidReceipt(other.address, 1_000_002n, await pay(other.address, 1_000_002n));

    const report = await reconcile();
    expect(state.distributions).toHaveLength(1);
    expect(report.reconciled).toHaveLength(1);
    const waiting = report.reconciled[0]!.receiptId === first.receiptId ? second : first;
    const reason = "the relayer's distributions for today are spent (DISTRIBUTION_DAILY_BUDGET): its distribution waits for the next UTC day";
    expect(report.skipped).toEqual([{ receiptId: waiting.receiptId, reason }]);
    expect((await stored(waiting)).status).toBe('paid');

    expect(await reconcile()).toEqual({ reconciled: [], waiting: [], skipped: [{ receiptId: waiting.receiptId, reason }] });
    expect(state.distributions).toHaveLength(1);

    // The next UTC day has a budget of its own.
    deps = { ...deps, clock: { now: () => Date.now() + 24 * 3_600_000 } };
    expect((await reconcile()).reconciled.map((entry) => entry.receiptId)).toEqual([waiting.receiptId]);
    expect(state.distributions).toHaveLength(2);
  });

  it('a budget of 0 sends nothing; a distribution that fails gives its unit back', async () => {
    const state = withRules({ distributionsPerDay: 0 });
    const split = await newSplit();
    const receipt = await paidReceipt(split.address, 1_000_003n, await pay(split.address, 1_000_003n));
    expect((await reconcile()).skipped.map((entry) => entry.receiptId)).toEqual([receipt.receiptId]);
    expect(state.distributions).toEqual([]);

    // A budget of 1, and a distribution that reverts: skipped, and the unit is back for the next run.
    const failing: Chain = Object.assign(Object.create(deps.chain!) as Chain, {
      distribute: async () => {
        throw Object.assign(new Error('execution reverted'), { code: 'CALL_EXCEPTION' });
      },
    });
    const rules = { ...deps.settings.relayer, distributionsPerDay: 1 };
    deps = { ...deps, chain: failing, settings: { ...deps.settings, relayer: rules } };
    expect((await reconcile()).skipped).toEqual([{ receiptId: receipt.receiptId, reason: 'distribution failed: execution reverted' }]);
    const working = deps;
    withRules({ distributionsPerDay: 1 });
    deps = { ...deps, claims: working.claims, receipts: working.receipts };
    expect((await reconcile()).reconciled.map((entry) => entry.receiptId)).toEqual([receipt.receiptId]);
  });
});
