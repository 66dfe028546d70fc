/**
 * A receipt's payments table in a real browser (headless Chromium), at 360 px and at 1280 px: the
 * console's pages served by the local host over memory stores, signed in through the real sign-in
 * routes, for a receipt paid by an underpayment and its top-up after a reverted attempt. No chain is
 * needed: the records are what the payment rules wrote (test/app/receipt-payments.test.ts has them
 * made on chain).
 *
 * Photographed into test-results/admin/receipt-payments-{phone,desktop}.png, the table alone into
 * receipt-payments-table-{phone,desktop}.png.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppDeps } from '../../shared/app/deps';
import { changeStatus } from '../../shared/app/receipt-status';
import { createReceipt } from '../../shared/app/receipts';
import { memoryDeps } from '../../shared/composition';
import type { PaymentRecord } from '../../shared/domain/payment';
import { launchBrowser, openPage, photographer } from '../support/browser';
import { startHost, type RunningHost } from '../support/http';
import { signInAs } from '../support/session';
import { testWallets } from '../support/siwe';
import { root } from '../support/stack';

const shots = join(root, 'test-results', 'admin');
const shot = photographer(shots);
const wallet = testWallets.merchant.address.toLowerCase();
const explorer = 'https://explorer.example';
const payer = '0x' + '9c'.repeat(20);
const at = Date.now() - 600_000;
const payments: PaymentRecord[] = [
  { txHash: '0x' + '3c'.repeat(32), token: null, payer, amount: '0', expected: null, blockNumber: 1_198, outcome: 'reverted', at },
  { txHash: '0x' + '1a'.repeat(32), token: 'USDT', payer, amount: '51020000', expected: '52020001', blockNumber: 1_201, outcome: 'underpaid', at: at + 60_000 },
  { txHash: '0x' + '2b'.repeat(32), token: 'USDT', payer, amount: '1000001', expected: '52020001', blockNumber: 1_207, outcome: 'paid', at: at + 120_000 },
];

let deps: AppDeps;
let host: RunningHost;
let browser: Browser;
let cookies: Array<{ name: string; value: string; url: string }>;

beforeAll(async () => {
  mkdirSync(shots, { recursive: true });
  const base = memoryDeps();
  const tokens = [{ symbol: 'USDT' as const, address: '0x' + 'b'.repeat(40), decimals: 6 }];
  deps = memoryDeps({ settings: { ...base.settings, tokens, payments: { ...base.settings.payments, explorerUrl: explorer } } });
  host = await startHost(deps);
  const session = await signInAs(testWallets.merchant);
  cookies = Object.entries(session.answer.cookies!).map(([name, cookie]) => ({ name, value: cookie.value, url: host.url }));
  await createReceipt(deps, { wallet, subscriptionId: null }, { id: 'R-two-payments', lineItems: [{ label: 'Beans, 1 kg', priceUsd: 51.5 }], totalUsd: 51.5 });
  await changeStatus(deps, { wallet, receiptId: 'R-two-payments', status: 'paid', actor: 'service', facts: { paidAt: at + 120_000, token: 'USDT', buyerWallet: payer, transactionHash: payments[2]!.txHash, amountPaid: '52020001', payments } });
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await host?.close();
});

describe('a receipt’s payments in the console', () => {
  it.each([
    ['phone', { width: 360, height: 780 }],
    ['desktop', { width: 1280, height: 900 }],
  ] as const)('lists each transaction on a %s, oldest first, linked to the explorer, and fits the width', async (name, viewport) => {
    const { context, page, problems } = await openPage(browser, '', viewport);
    try {
      await context.addCookies(cookies);
      await page.goto(`${host.url}/console/receipts?id=R-two-payments`);
      const rows = page.locator('#payments tbody tr');
      await rows.first().waitFor();
      expect(await rows.evaluateAll((found) => found.map((row) => row.getAttribute('data-outcome')))).toEqual(['reverted', 'underpaid', 'paid']);
      for (const payment of payments) {
        const row = page.locator(`#payments tr[data-payment="${payment.txHash}"]`);
        expect(await row.isVisible()).toBe(true);
        expect(await row.locator('a').getAttribute('href')).toBe(`${explorer}/tx/${payment.txHash}`);
        expect(await row.textContent()).toContain(String(payment.blockNumber));
      }
      expect(await page.locator('#payments tr[data-outcome="underpaid"]').textContent()).toContain('51.02 USDT of 52.020001 USDT due');
      expect(await page.locator('#payments tr[data-outcome="paid"]').textContent()).toContain('1.000001 USDT');
      // Nothing wider than the window but the tables' own frames, and no table wider than its frame.
      const overflowing = await page.evaluate(`[...document.querySelectorAll('body *')]
        .filter((element) => element.getBoundingClientRect().right > ${viewport.width} + 1 && !element.closest('.nav'))
        .map((element) => element.tagName.toLowerCase() + '.' + element.className)`);
      expect(overflowing).toEqual([]);
      await shot(page, 'receipt-payments', name);
      await page.locator('#payments').screenshot({ path: join(shots, `receipt-payments-table-${name}.png`) });
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('announces a payment recorded while the page is open, though an underpayment changes no status', async () => {
    const id = 'R-topped-up';
    await createReceipt(deps, { wallet, subscriptionId: null }, { id, lineItems: [{ label: 'Tea', priceUsd: 51.5 }], totalUsd: 51.5 });
    const { context, page, problems } = await openPage(browser, '', { width: 1280, height: 900 });
    try {
      await context.addCookies(cookies);
      await page.goto(`${host.url}/console/receipts?id=${id}`);
      expect(await page.locator('#payments').textContent()).toContain('No payment seen yet');
      const stored = (await deps.receipts.get(wallet, id))!;
      await deps.receipts.replace(wallet, { ...stored.value, payments: [payments[1]!] }, stored.etag);
      await page.locator('#status-changed', { hasText: 'A payment was recorded.' }).waitFor({ timeout: 10_000 });
      expect(await page.locator('#receipt-status').getAttribute('data-status')).toBe('pending');
      await page.getByRole('button', { name: 'Show the details' }).click();
      await page.locator(`#payments tr[data-payment="${payments[1]!.txHash}"]`).waitFor();
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
