import { Contract, NonceManager, Wallet, type BaseWallet } from 'ethers';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ANVIL_ACCOUNTS } from '../../scripts/local/anvil';
import { splitArtifact, testUsdcArtifact } from '../../shared/adapters/evm/artifacts';
import { createProvider } from '../../shared/adapters/evm/provider';
import type { AppDeps } from '../../shared/app/deps';
import { memoryDeps } from '../../shared/composition';
import { toCents } from '../../shared/domain/money';
import { addMerchant, startHost, type RunningHost } from '../support/http';
import { chainForTests } from '../support/chain';
import { pricingCases, type PricingCase } from '../support/pricing-cases';
import { signedSignIn, testWallets } from '../support/siwe';

/**
 * The setup order of the interface document, over HTTP on the local host, on the local chain:
 * sign in, deploy the split, set tax defaults and the fee, make a key, stock inventory, order.
 */
let deps: AppDeps;
let host: RunningHost;
const platformWallet = Wallet.createRandom().address.toLowerCase();
const partnerWallet = Wallet.createRandom().address.toLowerCase();

beforeAll(async () => {
  deps = memoryDeps({ chain: chainForTests(5) });
  deps = { ...deps, settings: { ...deps.settings, platformWallet, adminWallets: [testWallets.admin.address.toLowerCase()] } };
  host = await startHost(deps);
});
afterAll(() => host.close());

interface Browser {
  headers: Record<string, string>;
}

const signIn = async (wallet: BaseWallet): Promise<Browser> => {
  const { nonce } = (await host.call('/api/auth/nonce')).json as { nonce: string };
  const login = await fetch(`${host.url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: 'http://localhost:7071' },
    body: JSON.stringify(await signedSignIn(wallet, { nonce })),
  });
  expect(login.status).toBe(200);
  const cookie = login.headers.getSetCookie().map((line) => line.split(';')[0]).join('; ');
  const csrf = ((await login.json()) as { csrfToken: string }).csrfToken;
  return { headers: { cookie, 'x-csrf-token': csrf, origin: 'http://localhost:7071' } };
};

/** One merchant per fee combination: a split's fees are fixed when it is deployed. */
const merchants = new Map<string, { key: string; wallet: string; browser: Browser; stocked: Set<string> }>();

const merchantFor = async (testCase: PricingCase) => {
  const fees = `${testCase.platformFeeBps}/${testCase.partnerFeeBps}`;
  const existing = merchants.get(fees);
  if (existing) return existing;
  const admin = await signIn(testWallets.admin);
  const pricing = await host.call('/api/pricing/config', {
    method: 'POST',
    headers: admin.headers,
    body: { platformFeeBps: testCase.platformFeeBps, partnerFeeBps: testCase.partnerFeeBps, partnerWallet: testCase.partnerFeeBps > 0 ? partnerWallet : null },
  });
  expect(pricing.status).toBe(200);

  const wallet = Wallet.createRandom();
  const browser = await signIn(wallet);
  const deployed = await host.call('/api/split/deploy', { method: 'POST', headers: browser.headers });
  expect(deployed.status).toBe(200);
  const split = deployed.json.split as { address: string; recipients: Array<{ address: string; bps: number; role: string }> };
  const expectedRecipients = [
    { address: wallet.address.toLowerCase(), bps: 10_000 - testCase.platformFeeBps - testCase.partnerFeeBps, role: 'merchant' },
    ...(testCase.platformFeeBps > 0 ? [{ address: platformWallet, bps: testCase.platformFeeBps, role: 'platform' }] : []),
    ...(testCase.partnerFeeBps > 0 ? [{ address: partnerWallet, bps: testCase.partnerFeeBps, role: 'partner' }] : []),
  ];
  expect(split.recipients).toEqual(expectedRecipients);
  expect(await deps.chain!.readSplit(split.address)).toEqual(expectedRecipients.map(({ address, bps }) => ({ address, bps })));

  const created = await host.call('/api/keys', { method: 'POST', headers: browser.headers, body: { scopes: ['inventory:write', 'orders:create', 'split:read'] } });
  expect(created.status).toBe(201);
  const key = created.json.apiKey as string;
  const current = await host.call('/api/split/deploy', { headers: { 'x-api-key': key } });
  expect((current.json.split as { address: string }).address).toBe(split.address);
  const entry = { key, wallet: wallet.address.toLowerCase(), browser, stocked: new Set<string>() };
  merchants.set(fees, entry);
  return entry;
};

describe('merchant setup and orders on the local chain', () => {
  it.each(pricingCases)('$name', async (testCase) => {
    const merchant = await merchantFor(testCase);
    const shop = await host.call('/api/shop/config', {
      method: 'POST',
      headers: merchant.browser.headers,
      body: {
        processingFeePct: testCase.processingFeePct,
        taxDefaults: testCase.jurisdictionCode
          ? { jurisdictions: [{ code: testCase.jurisdictionCode, name: testCase.jurisdictionCode, rate: testCase.rate }], defaultJurisdictionCode: testCase.jurisdictionCode }
          : { jurisdictions: [], defaultJurisdictionCode: null },
      },
    });
    expect(shop.status).toBe(200);
    for (const item of testCase.items) {
      const body = { ...item, sku: `${testCase.name.length}-${item.sku}` };
      const stored = await host.call('/api/inventory', { method: 'POST', headers: { 'x-api-key': merchant.key }, body });
      expect(stored.status).toBe(200);
    }
    const answer = await host.call('/api/orders', {
      method: 'POST',
      headers: { 'x-api-key': merchant.key },
      body: { items: testCase.items.map((item) => ({ sku: `${testCase.name.length}-${item.sku}`, qty: item.qty })) },
    });
    expect(answer.status).toBe(200);
    const receipt = answer.json.receipt as { status: string; totalUsd: number; lineItems: Array<{ label: string; priceUsd: number }> };
    expect(receipt.status).toBe('generated');
    const { subtotal, tax, fee, total } = testCase.expected;
    expect(receipt.lineItems.slice(0, -2).reduce((sum, line) => sum + toCents(line.priceUsd), 0)).toBe(subtotal);
    expect(receipt.lineItems.slice(-2)).toEqual([
      { label: 'Tax', priceUsd: tax / 100 },
      { label: 'Processing Fee', priceUsd: fee / 100 },
    ]);
    expect(receipt.totalUsd).toBe(total / 100);
  });

  it('answers the same split again for the same recipients, and limits new deployments to 3 a day', async () => {
    const wallet = Wallet.createRandom();
    const browser = await signIn(wallet);
    const admin = await signIn(testWallets.admin);
    const first = await host.call('/api/split/deploy', { method: 'POST', headers: browser.headers });
    const again = await host.call('/api/split/deploy', { method: 'POST', headers: browser.headers });
    expect((again.json.split as { address: string }).address).toBe((first.json.split as { address: string }).address);
    const answers = [];
    for (const platformFeeBps of [110, 120, 130]) {
      await host.call('/api/pricing/config', { method: 'POST', headers: admin.headers, body: { platformFeeBps, partnerFeeBps: 0 } });
      answers.push(await host.call('/api/split/deploy', { method: 'POST', headers: browser.headers }));
    }
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 429]);
    expect(answers[2]!.json).toMatchObject({ error: 'rate_limited', resetAt: expect.any(Number) });
  });

  it('stops relayer-paid deployments for everyone when the global daily budget is spent (429 rate_limited until midnight UTC)', async () => {
    const saved = host;
    await saved.close();
    try {
      host = await startHost({ ...deps, settings: { ...deps.settings, splitDeployDailyBudget: 0 } });
      const wallet = Wallet.createRandom();
      const browser = await signIn(wallet);
      const refused = await host.call('/api/split/deploy', { method: 'POST', headers: browser.headers });
      const midnight = Date.now() - (Date.now() % 86_400_000) + 86_400_000;
      expect(refused).toMatchObject({ status: 429, json: { error: 'rate_limited', resetAt: midnight } });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect((await host.call('/api/split/deploy', { headers: { 'x-api-key': (await addMerchant(deps, wallet.address.toLowerCase())).apiKey } })).json.split).toBeNull();
    } finally {
      await host.close();
      host = await startHost(deps);
    }
  });

  it('lists payments into the split, each attributed, and distributions out of it, a page at a time', async () => {
    const merchant = [...merchants.values()][1]!;
    const split = ((await host.call('/api/split/deploy', { headers: { 'x-api-key': merchant.key } })).json.split as { address: string }).address;
    const { rpcUrl, chainId, usdc } = inject('chain');
    const buyer = new NonceManager(new Wallet(ANVIL_ACCOUNTS[6]!.privateKey, createProvider(rpcUrl, chainId)));
    const token = new Contract(usdc, testUsdcArtifact.abi, buyer);
    await (await token.getFunction('mint')(await buyer.getAddress(), 5_000_000n)).wait();
    await (await token.getFunction('transfer')(split, 2_000_000n)).wait();
    await (await buyer.sendTransaction({ to: split, value: 10n ** 15n })).wait();
    await (await new Contract(split, splitArtifact.abi, buyer).getFunction('distribute')(usdc)).wait();

    const seen: Array<{ kind: string; token: string; amount: string; to: string; attribution: string | null }> = [];
    let cursor: string | null = null;
    do {
      const page = await host.call(`/api/split/transactions?limit=2${cursor ? `&cursor=${cursor}` : ''}`, { headers: { 'x-api-key': merchant.key } });
      expect(page.status).toBe(200);
      seen.push(...(page.json.transactions as typeof seen));
      cursor = page.json.nextCursor as string | null;
    } while (cursor);
    expect(seen.filter((t) => t.kind === 'payment').map((t) => [t.token, t.amount])).toEqual([
      [usdc, '2000000'],
      ['0x0000000000000000000000000000000000000000', '1000000000000000'],
    ]);
    // Sent straight to the split, paying no receipt: nobody's, and marked so.
    expect(seen.filter((t) => t.kind === 'payment').map((t) => t.attribution)).toEqual(['unattributed', 'unattributed']);
    const distributed = seen.filter((t) => t.kind === 'distribution');
    expect(distributed.map((t) => t.attribution)).toEqual(distributed.map(() => null));
    expect(distributed.reduce((sum, t) => sum + BigInt(t.amount), 0n)).toBe(2_000_000n);
    expect(distributed.map((t) => t.to)).toContain(merchant.wallet);
  });

  it.each([
    ['fromBlock=10&toBlock=5', 'fromBlock'],
    ['fromBlock=0&toBlock=10000', 'toBlock'],
    ['toBlock=999999999', 'toBlock'],
    ['fromBlock=999999990&toBlock=999999999', 'toBlock'],
    ['fromBlock=999999999', 'fromBlock'],
    ['cursor=nonsense', 'cursor'],
    ['limit=0', 'limit'],
  ])('answers 400 invalid_input for split transactions ?%s', async (query, field) => {
    const merchant = [...merchants.values()][0]!;
    expect(await host.call(`/api/split/transactions?${query}`, { headers: { 'x-api-key': merchant.key } })).toMatchObject({ status: 400, json: { error: 'invalid_input', field } });
  });

  it('answers 400 platform_recipient_not_configured without a platform wallet', async () => {
    const saved = host;
    await saved.close();
    host = await startHost({ ...deps, settings: { ...deps.settings, platformWallet: undefined } });
    const browser = await signIn(Wallet.createRandom());
    expect(await host.call('/api/split/deploy', { method: 'POST', headers: browser.headers })).toMatchObject({ status: 400, json: { error: 'platform_recipient_not_configured' } });
  });
});
