/**
 * Reserve and billing over HTTP: the local host (the gateway's key check) in front of the handlers,
 * on the Cosmos protocol server and the run's anvil chain through the real EVM adapter. The merchant,
 * its split, the feed and the buyer are fresh, so nothing here races the other test files' accounts.
 */
import { chainWithOwnFeed, merchantWithSplit, payingSettings, testAccounts } from '../support/chain-merchant';
import { Contract, NonceManager, Wallet, parseEther, type JsonRpcProvider } from 'ethers';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { EvmChain } from '../../shared/adapters/evm/chain';
import { testUsdcArtifact } from '../../shared/adapters/evm/artifacts';
import { createProvider } from '../../shared/adapters/evm/provider';
import type { AppDeps } from '../../shared/app/deps';
import { createReceipt } from '../../shared/app/receipts';
import { updateShopConfig } from '../../shared/app/shop-config';
import { ZERO_ADDRESS } from '../../shared/domain/payment';
import { newReceipt } from '../../shared/domain/receipt';
import { receiptCore } from '../support/fixtures';
import { addMerchant, startHost, type RunningHost } from '../support/http';
import { cosmosStore } from '../support/stores';

const chainInfo = inject('chain');
let provider: JsonRpcProvider;
let funder: NonceManager;
let chain: EvmChain;
let feed: Contract;
let deps: AppDeps;
let host: RunningHost;
let merchant: string;
let split: string;
let platform: string;
let apiKey: string;

const erc20 = (address: string, runner: Wallet | NonceManager | JsonRpcProvider) => new Contract(address, testUsdcArtifact.abi, runner);
const mint = async (token: string, to: string, amount: bigint) => (await erc20(token, funder).getFunction('mint')(to, amount)).wait();
const setEth = (address: string, wei: bigint) => provider.send('anvil_setBalance', [address, '0x' + wei.toString(16)]);
/** A balance read straight from the chain, not through the adapter under test. */
const onChain = async (token: string, holder: string): Promise<bigint> =>
  token === ZERO_ADDRESS ? provider.getBalance(holder) : ((await erc20(token, provider).getFunction('balanceOf')(holder)) as bigint);

const get = (path: string, key: string | null = apiKey) => host.call(path, { headers: key ? { 'ocp-apim-subscription-key': key } : {} });

interface TokenRow {
  symbol: string;
  address: string;
  split: { balance: string; merchant: { amount: string } } | null;
  wallet: { amount: string };
  total: { amount: string };
  usdPrice: number | null;
  usdValue: number | null;
  share: number | null;
  targetShare: number | null;
}
const rows = (json: Record<string, unknown>) => json.tokens as TokenRow[];
const row = (json: Record<string, unknown>, symbol: string) => rows(json).find((candidate) => candidate.symbol === symbol)!;

beforeAll(async () => {
  provider = createProvider(chainInfo.rpcUrl, chainInfo.chainId);
  const accounts = await testAccounts(provider);
  funder = accounts.funder;
  ({ chain, feed } = await chainWithOwnFeed(() => accounts.newWallet()));
  const base = await cosmosStore.make({ chain });
  deps = { ...base, settings: payingSettings(base.settings, (await feed.getAddress()).toLowerCase()) };
  ({ merchant, platform, split } = await merchantWithSplit(deps, chain));
  apiKey = (await addMerchant(deps, merchant, { plan: 'pro' })).apiKey;
  host = await startHost(deps);

  // The merchant's wallet: 2 ETH and 25 USDC. Payments into the split: 100 USDC, 40 USDT and 0.01 ETH.
  await setEth(merchant, parseEther('2'));
  await mint(chainInfo.usdc, merchant, 25_000_000n);
  const buyer = new Wallet(Wallet.createRandom().privateKey, provider);
  await setEth(buyer.address, parseEther('10'));
  await mint(chainInfo.usdc, buyer.address, 100_000_000n);
  await mint(chainInfo.usdt, buyer.address, 40_000_000n);
  await (await erc20(chainInfo.usdc, buyer).getFunction('transfer')(split, 100_000_000n)).wait();
  await (await erc20(chainInfo.usdt, buyer).getFunction('transfer')(split, 40_000_000n)).wait();
  await (await buyer.sendTransaction({ to: split, value: parseEther('0.01') })).wait();
}, 120_000);

afterAll(async () => {
  await host?.close();
  chain?.destroy();
  provider?.destroy();
});

describe('GET /api/reserve/balances', () => {
  it('matches the chain after payments in two tokens (and ETH): the merchant’s part of the split plus its wallet, valued in USD', async () => {
    const answer = await get('/api/reserve/balances');
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ ok: true, wallet: merchant, split, note: null, targetRatios: null, ethPrice: { usd: 3000, stale: false } });
    for (const token of rows(answer.json)) {
      const inSplit = await onChain(token.address, split);
      const inWallet = await onChain(token.address, merchant);
      const merchantPart = inSplit - (inSplit * 100n) / 10_000n;
      expect(token.split).toMatchObject({ balance: inSplit.toString(), merchant: { amount: merchantPart.toString() } });
      expect(token.wallet.amount).toBe(inWallet.toString());
      expect(token.total.amount).toBe((inWallet + merchantPart).toString());
    }
    expect(row(answer.json, 'USDC')).toMatchObject({ split: { balance: '100000000', merchant: { amount: '99000000' } }, total: { amount: '124000000' }, usdPrice: 1, usdValue: 124 });
    expect(row(answer.json, 'USDT')).toMatchObject({ split: { balance: '40000000', merchant: { amount: '39600000' } }, total: { amount: '39600000' }, usdValue: 39.6 });
    expect(row(answer.json, 'ETH')).toMatchObject({ split: { merchant: { amount: parseEther('0.0099').toString() } }, total: { amount: parseEther('2.0099').toString() }, usdPrice: 3000, usdValue: 6029.7 });
    expect(answer.json.totalUsd).toBe(6193.3);
    const shares = rows(answer.json).map((token) => token.share!);
    expect(shares.reduce((sum, share) => sum + share, 0)).toBeCloseTo(1, 12);
    expect(row(answer.json, 'USDC').share).toBeCloseTo(124 / 6193.3, 12);
    expect(rows(answer.json).every((token) => token.targetShare === null)).toBe(true);
  });

  it('a distribution moves the merchant’s part from the split to its wallet: the holdings stay the same', async () => {
    await chain.distribute(split, chainInfo.usdc);
    const answer = await get('/api/reserve/balances');
    expect(row(answer.json, 'USDC')).toMatchObject({ split: { balance: '0', merchant: { amount: '0' } }, wallet: { amount: '124000000' }, total: { amount: '124000000' } });
    expect(await onChain(chainInfo.usdc, merchant)).toBe(124_000_000n);
    expect(await onChain(chainInfo.usdc, platform)).toBe(1_000_000n);
  });

  it('without a split answers the wallet alone and says so', async () => {
    const other = Wallet.createRandom().address.toLowerCase();
    await mint(chainInfo.usdt, other, 5_000_000n);
    const key = (await addMerchant(deps, other, { plan: 'pro' })).apiKey;
    const answer = await get('/api/reserve/balances', key);
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ split: null, note: 'no split is deployed: only the wallet is counted', totalUsd: 5 });
    expect(row(answer.json, 'USDT')).toMatchObject({ split: null, wallet: { amount: '5000000' }, total: { amount: '5000000' }, share: 1 });
    expect(rows(answer.json).every((token) => token.split === null)).toBe(true);
    const recommendation = await get('/api/reserve/recommend', key);
    expect(recommendation.status).toBe(200);
    expect(recommendation.json).toMatchObject({ token: 'USDC', basis: 'even_split' });
    const billing = await get('/api/billing/balance', key);
    expect(billing.status).toBe(200);
    expect(billing.json.platformFees).toMatchObject({ split: null, tokens: [], paidUsd: 0, note: 'no split is deployed: no platform fees' });
  });
});

describe('GET /api/reserve/balances with deposit addresses', () => {
  it('counts, in the total, the merchant’s part of what waits at its paid receipts’ deposit addresses; a sweep then moves it into the split, the total unchanged', async () => {
    const shop = await merchantWithSplit(deps, chain);
    const key = (await addMerchant(deps, shop.merchant, { plan: 'pro' })).apiKey;
    const withDeposit = async (status: 'paid' | 'generated', split = shop.split) => {
      const receiptId = `R-deposit-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
      const address = (await chain.depositAddress(split, shop.merchant, receiptId))!;
      await deps.receipts.create(shop.merchant, newReceipt(receiptCore({ receiptId, wallet: shop.merchant, status, usd: 10 }), Date.now(), { deposit: { address, split } }));
      return { receiptId, address };
    };
    const paid = await withDeposit('paid');
    const unpaid = await withDeposit('generated');
    // A paid receipt whose deposit sweeps into another split: not this split's money.
    const elsewhere = await withDeposit('paid', (await merchantWithSplit(deps, chain)).split);
    await mint(chainInfo.usdc, paid.address, 10_000_001n);
    await mint(chainInfo.usdc, unpaid.address, 3_000_000n);
    await mint(chainInfo.usdc, elsewhere.address, 5_000_000n);
    await setEth(paid.address, parseEther('0.01'));

    const before = await get('/api/reserve/balances', key);
    expect(before.status).toBe(200);
    // 9,900 of 10,000 bps, the remainder to the merchant: 10,000,001 − 100,000.
    expect(row(before.json, 'USDC')).toMatchObject({ split: { balance: '0', merchant: { amount: '0' } }, wallet: { amount: '0' }, total: { amount: '9900001' }, usdValue: 9.9 });
    expect(row(before.json, 'ETH')).toMatchObject({ split: { merchant: { amount: '0' } }, total: { amount: parseEther('0.0099').toString() }, usdValue: 29.7 });
    expect(before.json.totalUsd).toBe(39.6);

    await chain.sweepDeposits([{ split: shop.split, wallet: shop.merchant, receiptId: paid.receiptId, tokens: [chainInfo.usdc, ZERO_ADDRESS] }]);
    const after = await get('/api/reserve/balances', key);
    expect(row(after.json, 'USDC')).toMatchObject({ split: { balance: '10000001', merchant: { amount: '9900001' } }, total: { amount: '9900001' } });
    expect(row(after.json, 'ETH')).toMatchObject({ split: { merchant: { amount: parseEther('0.0099').toString() } }, total: { amount: parseEther('0.0099').toString() } });
    expect(after.json.totalUsd).toBe(39.6);
  });
});

describe('GET /api/reserve/recommend and the portal', () => {
  it('asks for the token furthest below its target, with the reason and the numbers; the portal pre-selects it', async () => {
    await updateShopConfig(deps, merchant, { reserveRatios: { USDC: 0.2, USDT: 0.3, ETH: 0.5 } });
    const answer = await get('/api/reserve/recommend');
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ ok: true, token: 'USDT', basis: 'ratios', totalUsd: 6193.3 });
    expect(answer.json.reason).toMatch(/^USDT is 0\.64 % of the holdings against a target of 30 %: the largest shortfall$/);
    const candidates = answer.json.candidates as Array<{ symbol: string; target: number; shortfall: number }>;
    expect(candidates.map((candidate) => [candidate.symbol, candidate.target])).toEqual([
      ['USDC', 0.2],
      ['USDT', 0.3],
      ['ETH', 0.5],
    ]);
    const balances = await get('/api/reserve/balances');
    expect(balances.json.targetRatios).toEqual({ USDC: 0.2, USDT: 0.3, ETH: 0.5 });
    expect(row(balances.json, 'ETH').targetShare).toBe(0.5);

    const id = `reserve-${Date.now()}`;
    await createReceipt(deps, { wallet: merchant, subscriptionId: null }, { id, lineItems: [{ label: 'Beans', priceUsd: 12 }], totalUsd: 12 });
    const view = await host.call(`/api/portal/${id}`);
    expect(view.json).toMatchObject({ payable: true, recommendedToken: 'USDT' });
    const page = await fetch(`${host.url}/pay/${id}`).then((response) => response.text());
    expect(page).toContain('<input type="radio" name="token" value="USDT" checked>');
    expect(page).not.toContain('value="USDC" checked');
  });

  it('a stale ETH feed leaves ETH unvalued and out of the recommendation, without an error', async () => {
    const owner = feed.runner as Wallet;
    await (await feed.connect(owner).getFunction('setUpdatedAt')(Math.floor(Date.now() / 1000) - 3 * 86_400)).wait();
    try {
      const balances = await get('/api/reserve/balances');
      expect(balances.status).toBe(200);
      expect(balances.json).toMatchObject({ ethPrice: { usd: null, stale: true }, totalUsd: 163.6, note: 'the ETH/USD feed is stale: ETH is not valued and has no share' });
      expect(row(balances.json, 'ETH')).toMatchObject({ usdPrice: null, usdValue: null, share: null, total: { amount: parseEther('2.0099').toString() } });
      expect(row(balances.json, 'USDC').share).toBeCloseTo(124 / 163.6, 12);
      const answer = await get('/api/reserve/recommend');
      expect(answer.status).toBe(200);
      // USDC 0.2 and USDT 0.3 scaled to 0.4 and 0.6; USDT holds 24 % of the valued 163.60 USD.
      expect(answer.json).toMatchObject({ token: 'USDT', totalUsd: 163.6, ethPrice: { stale: true } });
      expect(answer.json.reason).toContain('ETH left out: no fresh USD price');
    } finally {
      await (await feed.connect(owner).getFunction('setAnswer')(3000n * 10n ** 8n)).wait();
    }
  });
});

describe('GET /api/billing/balance', () => {
  it('counts the requests made with the key, and reports plan, quota, period and the platform fees through the split', async () => {
    const { apiKey: fresh, subscriptionId } = await addMerchant(deps, merchant, { plan: 'pro' });
    const calls = 7;
    for (let i = 0; i < calls; i++) expect((await get('/api/split/deploy', fresh)).status).toBe(200);
    const first = await get('/api/billing/balance', fresh);
    expect(first.status).toBe(200);
    const now = Date.now();
    expect(first.json).toMatchObject({
      ok: true,
      wallet: merchant,
      subscriptionId,
      plan: { name: 'pro', walletPlan: 'starter', source: 'starter', endsAt: null },
      quota: { requestsPerMinute: deps.settings.planQuotas.pro },
      // The seven calls and this one.
      usage: { requests: calls + 1 },
    });
    const period = first.json.period as { start: number; end: number };
    expect(period.start).toBeLessThanOrEqual(now);
    expect(period.end).toBeGreaterThan(now);
    expect(new Date(period.start).getUTCDate()).toBe(new Date(now).getUTCDate());
    expect(first.json.renewsAt).toBe(period.end);
    // Only this key's requests count: the wallet's first key made many more above. The read itself counts.
    expect(((await get('/api/billing/balance', fresh)).json.usage as { requests: number }).requests).toBe(calls + 2);

    const fees = first.json.platformFees as { tokens: Array<Record<string, unknown>>; [key: string]: unknown };
    expect(fees).toMatchObject({ split, platformWallet: platform, platformFeeBps: 100, complete: true, note: null });
    // 1 % of 100 USDC was distributed to the platform; 1 % of every payment is its share.
    expect(fees.tokens).toEqual([
      expect.objectContaining({ symbol: 'USDC', paid: '1000000', paidUsd: 1, accrued: '1000000', accruedUsd: 1 }),
      expect.objectContaining({ symbol: 'USDT', paid: '0', paidUsd: 0, accrued: '400000', accruedUsd: 0.4 }),
      expect.objectContaining({ symbol: 'ETH', paid: '0', accrued: parseEther('0.0001').toString(), accruedUsd: 0.3 }),
    ]);
    expect(fees).toMatchObject({ paidUsd: 1, accruedUsd: 1.7 });
  });
});

describe('who may ask', () => {
  it.each(['/api/reserve/balances', '/api/reserve/recommend', '/api/billing/balance'])('%s: 403 for a key without split:read, 401 without a key', async (path) => {
    const narrow = (await addMerchant(deps, merchant, { scopes: ['receipts:read'], plan: 'pro' })).apiKey;
    expect(await get(path, narrow)).toMatchObject({ status: 403, json: { error: 'forbidden' } });
    expect(await get(path, null)).toMatchObject({ status: 401, json: { error: 'unauthorized' } });
  });
});
