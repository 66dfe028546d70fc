/**
 * The Split page's transactions in a real browser (headless Chromium), at 360 px and at 1280 px: every
 * transfer into the split and into a receipt's deposit address with whose it is (a receipt's payment,
 * a sweep, unattributed), a token the shop does not accept among them, and ETH at a deposit address
 * that no payment accounts for. The console is served by the local host over memory stores, signed in
 * through the real sign-in routes; the chain is a stand-in answering fixed logs (test/app/inflows.test.ts
 * makes the same kinds of transfer on the run's chain).
 *
 * Photographed into test-results/admin/split-transactions-{phone,desktop}.png, the table alone into
 * split-transactions-table-{phone,desktop}.png.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppDeps } from '../../shared/app/deps';
import { paymentTransferClaimId } from '../../shared/app/payments/ledger';
import { changeStatus } from '../../shared/app/receipt-status';
import { createReceipt } from '../../shared/app/receipts';
import { memoryDeps } from '../../shared/composition';
import { ZERO_ADDRESS, type PaymentRecord } from '../../shared/domain/payment';
import type { Chain, ChainMove, SplitTransfer } from '../../shared/ports/chain';
import { launchBrowser, openPage, photographer } from '../support/browser';
import { merchantRecordWithSplit } from '../support/chain-merchant';
import { startHost, type RunningHost } from '../support/http';
import { signInAs } from '../support/session';
import { testWallets } from '../support/siwe';
import { root } from '../support/stack';

const shots = join(root, 'test-results', 'admin');
const shot = photographer(shots);
const wallet = testWallets.merchant.address.toLowerCase();
const explorer = 'https://explorer.example';
const chainId = 31337;
const USDC = '0x' + 'c0'.repeat(20);
const FOREIGN = '0x' + 'f0'.repeat(20);
const SPLIT = '0x' + '5b'.repeat(20);
const DEPOSIT = '0x' + 'd1'.repeat(20);
const BUYER = '0x' + '9e'.repeat(20);
const STRANGER = '0x' + '77'.repeat(20);
const HEAD = 1_210;
const hash = (byte: string) => '0x' + byte.repeat(32);
const receiptId = 'R-at-deposit';
const at = Date.now() - 600_000;

const record: PaymentRecord = { txHash: hash('1a'), token: 'USDC', payer: BUYER, amount: '20000000', expected: '20000000', blockNumber: 1_201, outcome: 'paid', at };
/** What the stand-in chain's logs hold: into the deposit address and the split, the sweep, a distribution. */
const depositMoves: ChainMove[] = [
  { token: USDC, from: BUYER, to: DEPOSIT, amount: '20000000', logIndex: 3, txHash: hash('1a'), blockNumber: 1_201 },
  { token: FOREIGN, from: STRANGER, to: DEPOSIT, amount: '4200000', logIndex: 0, txHash: hash('3c'), blockNumber: 1_203 },
  { token: FOREIGN, from: DEPOSIT, to: SPLIT, amount: '4200000', logIndex: 2, txHash: hash('4d'), blockNumber: 1_205 },
];
const splitLogs: SplitTransfer[] = [
  { kind: 'payment', token: USDC, from: STRANGER, to: SPLIT, amount: '777000', txHash: hash('2b'), blockNumber: 1_202, logIndex: 1 },
  { kind: 'payment', token: USDC, from: DEPOSIT, to: SPLIT, amount: '20000000', txHash: hash('4d'), blockNumber: 1_205, logIndex: 1 },
  { kind: 'distribution', token: USDC, from: SPLIT, to: wallet, amount: '19800000', txHash: hash('5e'), blockNumber: 1_206, logIndex: 0 },
];
const strayEth = 10n ** 15n;

const standInChain = {
  chainId,
  splitFactory: '0x' + 'fa'.repeat(20),
  blockNumber: async () => HEAD,
  splitTransfers: async () => splitLogs,
  tokenTransfersInto: async (addresses: readonly string[]) => depositMoves.filter((move) => addresses.includes(move.to)),
  // The deposit address holds stray ETH at the head; nothing before.
  balancesOf: async (holders: readonly string[], _tokens: readonly string[], block?: number) =>
    Object.fromEntries(holders.map((holder) => [holder, { [ZERO_ADDRESS]: holder === DEPOSIT && block === HEAD ? strayEth : 0n }])),
  splitHoldings: async (_split: string, _payee: string, tokens: readonly string[]) => Object.fromEntries(tokens.map((token) => [token, { distributable: 0n, credited: 0n }])),
} as unknown as Chain;

let deps: AppDeps;
let host: RunningHost;
let browser: Browser;
let cookies: Array<{ name: string; value: string; url: string }>;

beforeAll(async () => {
  mkdirSync(shots, { recursive: true });
  const base = memoryDeps();
  const tokens = [
    { symbol: 'USDC' as const, address: USDC, decimals: 6 },
    { symbol: 'ETH' as const, address: ZERO_ADDRESS, decimals: 18 },
  ];
  deps = memoryDeps({ chain: standInChain, settings: { ...base.settings, chainId, tokens, payments: { ...base.settings.payments, explorerUrl: explorer } } });
  await deps.merchants.upsert(wallet, merchantRecordWithSplit(wallet, { address: SPLIT, platform: '0x' + 'ab'.repeat(20), txHash: hash('0f'), chainId }));
  host = await startHost(deps);
  const session = await signInAs(testWallets.merchant);
  cookies = Object.entries(session.answer.cookies!).map(([name, cookie]) => ({ name, value: cookie.value, url: host.url }));
  // The receipt paid at its deposit address: its record, and the ledger's claim of the transfer.
  await createReceipt(deps, { wallet, subscriptionId: null }, { id: receiptId, lineItems: [{ label: 'Beans, 1 kg', priceUsd: 19.8 }], totalUsd: 19.8 });
  await changeStatus(deps, {
    wallet,
    receiptId,
    status: 'paid',
    actor: 'service',
    facts: { paidAt: at, token: 'USDC', buyerWallet: BUYER, transactionHash: record.txHash, amountPaid: record.amount, payments: [record] },
  });
  // The address its first quote fixed (the portal writes it; no quote is made here).
  const stored = (await deps.receipts.get(wallet, receiptId))!;
  await deps.receipts.replace(wallet, { ...stored.value, deposit: { address: DEPOSIT, split: SPLIT } }, stored.etag);
  const claim = paymentTransferClaimId(chainId, record.txHash, 3);
  await deps.claims.create(claim, { id: claim, owner: `${wallet}:${receiptId}`, createdAt: at });
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await host?.close();
});

describe('the split’s transactions in the console', () => {
  it.each([
    ['phone', { width: 360, height: 780 }],
    ['desktop', { width: 1280, height: 900 }],
  ] as const)('marks each transfer in as a payment, a sweep or unattributed on a %s, and fits the width', async (name, viewport) => {
    const { context, page, problems } = await openPage(browser, '', viewport);
    try {
      await context.addCookies(cookies);
      await page.goto(`${host.url}/console/split`);
      const rows = page.locator('#transactions tbody tr');
      await rows.first().waitFor();
      expect(await rows.evaluateAll((found) => found.map((row) => [row.getAttribute('data-kind'), row.getAttribute('data-attribution')]))).toEqual([
        ['deposit', 'payment'],
        ['payment', 'unattributed'],
        ['deposit', 'unattributed'],
        ['payment', 'sweep'],
        ['payment', 'sweep'],
        ['distribution', null],
      ]);
      const row = (tx: string, kind: string) => page.locator(`#transactions tr[data-tx="${tx}"][data-kind="${kind}"]`);
      expect(await row(hash('1a'), 'deposit').textContent()).toContain('20 USDC');
      expect(await row(hash('1a'), 'deposit').locator(`a[href="/console/receipts?id=${receiptId}"]`).count()).toBe(1);
      expect(await row(hash('2b'), 'payment').textContent()).toMatch(/Unattributed.*0\.777 USDC/s);
      // The token the shop does not accept: base units and its contract, at the receipt's address.
      const foreign = page.locator(`#transactions tr[data-tx="${hash('3c')}"]`);
      expect(await foreign.textContent()).toMatch(/Unattributed.*at the address of.*R-at-deposit.*4200000 units of/s);
      expect(await page.locator('#transactions tr[data-attribution="sweep"] a[href*="R-at-deposit"]').count()).toBe(2);
      for (const tx of [hash('1a'), hash('2b'), hash('3c')]) expect(await page.locator(`#transactions tr[data-tx="${tx}"] a[href="${explorer}/tx/${tx}"]`).count()).toBe(1);
      expect(await page.locator('#deposit-eth-unattributed').textContent()).toContain('0.001 ETH at');
      const overflowing = await page.evaluate(`[...document.querySelectorAll('body *')]
        .filter((element) => element.getBoundingClientRect().right > ${viewport.width} + 1 && !element.closest('.nav'))
        .map((element) => element.tagName.toLowerCase() + '.' + element.className + ' ' + element.textContent.slice(0, 30) + ' in ' + element.closest('section, [id]')?.id)`);
      expect(overflowing).toEqual([]);
      await shot(page, 'split-transactions', name);
      await page.locator('#transactions').screenshot({ path: join(shots, `split-transactions-table-${name}.png`) });
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('the receipt’s page names its deposit address', async () => {
    const { context, page, problems } = await openPage(browser, '', { width: 360, height: 780 });
    try {
      await context.addCookies(cookies);
      await page.goto(`${host.url}/console/receipts?id=${receiptId}`);
      expect(await page.locator('#deposit-address').textContent()).toBe(DEPOSIT);
      expect(await page.locator(`#payments tr[data-payment="${record.txHash}"]`).textContent()).toContain('20 USDC');
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
