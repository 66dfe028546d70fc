/**
 * The merchant console's operations in a real browser, as a new merchant sets up and sells: sign in
 * with the wallet, the split deployed from it on the Split page, an API key made in the console
 * (shown once), an order made with that key through the API, a sale at the terminal paid on chain by
 * a buyer's wallet while the screen watches, a refund asked and sent from the receipt's page, a key
 * revoked and rolled, and a test webhook. The layout scenario sets its merchant up through the API
 * with the console's session (the relayer deploys that split).
 * Runs `npm start` in a data folder of its own (its own anvil); the merchant is a new wallet that
 * anvil impersonates (test/support/browser.ts).
 *
 * Every page is photographed at 360 px and at 1280 px wide into test-results/admin/ops-*.png.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Interface, Wallet } from 'ethers';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../shared/webhook-verify.mjs';
import { impersonatedWallet, launchBrowser, openPage, photographer, rpc, signInToConsole, type OpenedPage } from '../support/browser';
import { startReceiver } from '../support/receiver';
import { call, root, stackEnv, startStack, stopStack, waitFor, type StartedStack } from '../support/stack';

const dataDir = mkdtempSync(join(tmpdir(), 'admin-ops-browser-'));
const env = stackEnv(dataDir);
const shots = join(root, 'test-results', 'admin');
const phone = { width: 360, height: 780 };
const desktop = { width: 1280, height: 900 };
const shot = photographer(shots);
const erc20 = new Interface(['function transfer(address to, uint256 amount) returns (bool)', 'function balanceOf(address owner) view returns (uint256)']);

let stack: StartedStack;
let browser: Browser;
let rpcUrl: string;
let buyer: string;
let usdc: string;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  mkdirSync(shots, { recursive: true });
  stack = await startStack(env);
  const credentials = JSON.parse(readFileSync(join(dataDir, 'local-credentials.json'), 'utf8')) as { rpcUrl: string; buyers: string[]; tokens: { USDC: string } };
  rpcUrl = credentials.rpcUrl;
  buyer = credentials.buyers[0]!;
  usdc = credentials.tokens.USDC;
  browser = await launchBrowser();
  receiver = await startReceiver();
}, 120_000);

afterAll(async () => {
  await receiver?.close();
  await browser?.close();
  if (stack && stack.child.exitCode === null) await stopStack(stack);
  rmSync(dataDir, { recursive: true, force: true });
}, 60_000);

const newMerchant = () => impersonatedWallet(rpcUrl);
type Merchant = Awaited<ReturnType<typeof newMerchant>>;

const openAs = (merchant: Merchant, viewport: { width: number; height: number }): Promise<OpenedPage> =>
  openPage(browser, rpcUrl, viewport, { account: merchant.account, privateKey: merchant.privateKey });

const signIn = signInToConsole;

/** A JSON call from the page, with its session cookie and CSRF token (what the console's own script sends). */
const fromPage = (page: Page, method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> =>
  page.evaluate(`(async () => {
    const csrf = (document.cookie.split('; ').find((part) => part.startsWith('cb_csrf_token=')) || '').split('=')[1] || '';
    const response = await fetch(${JSON.stringify(path)}, {
      method: ${JSON.stringify(method)},
      headers: { 'content-type': 'application/json', 'x-csrf-token': decodeURIComponent(csrf) },
      ${body === undefined ? '' : `body: ${JSON.stringify(JSON.stringify(body))},`}
    });
    return { status: response.status, json: await response.json() };
  })()`);

/** Sends USDC from an account anvil holds (a buyer, or the impersonated merchant). */
const sendUsdc = async (from: string, to: string, amount: bigint) => {
  const hash = await rpc<string>(rpcUrl, 'eth_sendTransaction', [{ from, to: usdc, data: erc20.encodeFunctionData('transfer', [to, amount]) }]);
  await waitFor('the transfer to be mined', async () => ((await rpc<{ blockNumber?: string } | null>(rpcUrl, 'eth_getTransactionReceipt', [hash]))?.blockNumber ? true : undefined));
  return hash;
};

const visit = async (page: Page, path: string, heading: string) => {
  await page.goto(`${stack.baseUrl}${path}`);
  expect(await page.locator('main h1').first().textContent()).toBe(heading);
};

/** Each page has no element wider than the window (nothing scrolls sideways but the tables' own frames). */
const fitsWidth = (page: Page): Promise<string[]> =>
  page.evaluate(`(() => {
    const width = ${page.viewportSize()!.width};
    return [...document.querySelectorAll('body *')]
      .filter((element) => !element.closest('.table-wrap, .nav') && element.getBoundingClientRect().right > width + 1)
      .map((element) => element.tagName.toLowerCase() + (element.id ? '#' + element.id : '') + '.' + element.className);
  })()`);

/** Every control has a name (a label, aria-label or text). */
const unlabelled = (page: Page): Promise<string[]> =>
  page.evaluate(`[...document.querySelectorAll('main input:not([type="hidden"]), main select, main textarea, main button')]
    .filter((element) => element.offsetParent !== null)
    .filter((element) => {
      const labelled = element.getAttribute('aria-label') || (element.labels && element.labels.length) || element.getAttribute('aria-labelledby');
      return !labelled && !(element.tagName === 'BUTTON' && element.textContent.trim());
    })
    .map((element) => element.outerHTML.slice(0, 120))`);

const activeId = (page: Page): Promise<string | undefined> => page.evaluate('document.activeElement ? document.activeElement.id : undefined');

describe('a new merchant sets up and sells in the console', () => {
  it('signs in, makes a key, takes a terminal payment, refunds it, rolls a key and tests its webhook', async () => {
    const merchant = await newMerchant();
    const { context, page, problems } = await openAs(merchant, phone);
    try {
      // Sign in on the Split page (the address asked for is shown after sign-in) and deploy the split from the wallet.
      await page.goto(`${stack.baseUrl}/console/split`);
      await signIn(page);
      expect(await page.locator('main h1').textContent()).toBe('Split');
      await page.getByRole('button', { name: 'Deploy from my wallet' }).click();
      await page.locator('#split-address').waitFor({ timeout: 45_000 });
      // Where the shop's webhooks go: the test's receiver (the Settings page's own test covers the form).
      // The first URL makes the shop's signing secret, which signs the receipts the terminal makes.
      const configured = await fromPage(page, 'POST', '/api/shop/config', { webhookUrl: receiver.url });
      expect(configured.status).toBe(200);
      const webhookSecret = configured.json.webhookSecret as string;
      expect(webhookSecret).toMatch(/^whsec_/);
      await visit(page, '/console/api-keys', 'API keys');

      // A key made in the console, by keyboard: tick the scopes, submit; it is shown once.
      await shot(page, 'ops-flow-1-keys', 'phone');
      for (const scope of ['inventory-write', 'orders-create', 'receipts-read']) {
        const box = page.locator(`#scope-${scope}`);
        if (!(await box.isChecked())) {
          await box.focus();
          await page.keyboard.press('Space');
        }
      }
      await page.getByRole('button', { name: 'Create key' }).focus();
      await page.keyboard.press('Enter');
      await page.locator('#key-reveal').waitFor({ state: 'visible' });
      const apiKey = await page.locator('#key-value').inputValue();
      expect(apiKey).toMatch(/^sk_/);
      expect(await activeId(page)).toBe('key-value');
      await page.getByRole('button', { name: 'Copy' }).click();
      await page.locator('#key-copy-status', { hasText: /^(Copied to the clipboard\.|Selected: press Ctrl\+C \(⌘C\) to copy\.)$/ }).waitFor();
      await shot(page, 'ops-flow-2-key-created', 'phone');
      await page.getByRole('button', { name: 'I have saved it' }).click();
      await page.locator('#flash', { hasText: 'created' }).waitFor();
      expect(await page.locator('#key-value').inputValue()).toBe('');
      expect(await page.locator('.keys-table tbody tr').count()).toBe(1);

      // The key works on the API: an item, then an order priced from it.
      const asKey = (path: string, body: unknown) => fetch(`${stack.baseUrl}${path}`, { method: 'POST', headers: { 'x-api-key': apiKey, 'content-type': 'application/json' }, body: JSON.stringify(body) }).then(async (response) => ({ status: response.status, json: (await response.json()) as Record<string, unknown> }));
      expect((await asKey('/api/inventory', { sku: 'TEA-1', name: 'Green tea', priceUsd: 6.5, stock: 10 })).status).toBe(200);
      const order = await asKey('/api/orders', { items: [{ sku: 'TEA-1', qty: 2 }] });
      expect(order.status).toBe(200);
      const orderId = (order.json.receipt as { receiptId: string }).receiptId;

      // The terminal: an amount becomes a QR code; a buyer pays it; the screen turns to Paid.
      await visit(page, '/console/terminal', 'Terminal');
      await shot(page, 'ops-flow-3-terminal', 'phone');
      await page.getByLabel('Amount (USD)').fill('12.50');
      await page.getByLabel('What it is for').fill('Table 4');
      await page.getByLabel('Amount (USD)').press('Enter');
      await page.locator('#sale').waitFor({ state: 'visible' });
      const qr = page.locator('#sale-qr');
      await expect.poll(() => page.evaluate("(() => { const image = document.getElementById('sale-qr'); return image.complete && image.naturalWidth > 0; })()")).toBe(true);
      expect(await qr.getAttribute('alt')).toMatch(/^QR code of the payment link for \$\d+\.\d\d$/);
      const saleId = (await page.locator('#sale-receipt').textContent())!;
      await shot(page, 'ops-flow-4-terminal-qr', 'phone');
      // The buyer's wallet: a quote for USDC, then the quoted amount sent to the split.
      const quote = await call(stack.baseUrl, `/api/portal/${encodeURIComponent(saleId)}/quote`, { method: 'POST', body: { token: 'USDC' } });
      expect(quote.status).toBe(200);
      const { payTo, amount } = quote.json.quote as { payTo: string; amount: string };
      await sendUsdc(buyer, payTo, BigInt(amount));
      await page.locator('#sale-paid').waitFor({ state: 'visible', timeout: 45_000 });
      expect(await page.locator('#sale-paid-text').textContent()).toMatch(/^Paid \$\d+\.\d\d$/);
      expect(await activeId(page)).toBe('sale-paid');
      await shot(page, 'ops-flow-5-terminal-paid', 'phone');
      // Its webhook is signed by the shop's secret, not by the key made above.
      const saleEvent = await waitFor('the sale’s webhook', async () => receiver.received.find((request) => JSON.parse(request.body).receiptId === saleId));
      expect(verifyWebhook({ body: saleEvent.body, headers: saleEvent.headers, secret: webhookSecret }).ok).toBe(true);
      expect(verifyWebhook({ body: saleEvent.body, headers: saleEvent.headers, secret: apiKey }).ok).toBe(false);

      // Receipts: both, with live statuses; the sale's page has its lines, history and deliveries.
      await visit(page, '/console/receipts', 'Receipts');
      await page.locator(`tr[data-receipt="${saleId}"] [data-status="paid"], tr[data-receipt="${saleId}"] [data-status="reconciled"]`).waitFor();
      expect(await page.locator(`tr[data-receipt="${orderId}"]`).count()).toBe(1);
      // The order's receipt is paid while the list is open: its row turns to Paid with no reload.
      expect(await page.locator(`tr[data-receipt="${orderId}"] [data-status]`).getAttribute('data-status')).not.toMatch(/^(paid|reconciled)$/);
      const orderQuote = await call(stack.baseUrl, `/api/portal/${encodeURIComponent(orderId)}/quote`, { method: 'POST', body: { token: 'USDC' } });
      expect(orderQuote.status).toBe(200);
      await page.evaluate('window.notReloaded = true');
      const due = orderQuote.json.quote as { payTo: string; amount: string };
      await sendUsdc(buyer, due.payTo, BigInt(due.amount));
      await page.locator(`tr[data-receipt="${orderId}"] [data-status="paid"], tr[data-receipt="${orderId}"] [data-status="reconciled"]`).waitFor({ timeout: 45_000 });
      expect(await page.evaluate('window.notReloaded')).toBe(true);
      await shot(page, 'ops-flow-6-receipts', 'phone');
      await page.getByRole('link', { name: saleId }).click();
      await page.locator('#summary-title', { hasText: saleId }).waitFor();
      expect(await page.locator('#lines').textContent()).toContain('Table 4');
      await page.locator('#deliveries tbody tr').first().waitFor();
      // A delivery sent again, with progress, then logged.
      const attempts = await page.locator('#deliveries tbody tr').count();
      await page.locator('button[data-redeliver]').first().click();
      await page.locator('#flash', { hasText: 'Delivered again' }).waitFor({ timeout: 15_000 });
      expect(await page.locator('#deliveries tbody tr').count()).toBe(attempts + 1);

      // A refund of all of it, asked here and sent from the merchant's wallet (which holds USDC now).
      await shot(page, 'ops-flow-7-receipt-paid', 'phone');
      expect(await fitsWidth(page)).toEqual([]);
      await page.getByRole('button', { name: 'Ask for the refund' }).click();
      await page.locator('#flash', { hasText: 'Refund asked' }).waitFor();
      const refundAmount = BigInt((await page.locator('#refund-send').getAttribute('data-refund-amount'))!);
      await sendUsdc(buyer, merchant.account, refundAmount);
      await shot(page, 'ops-flow-8-receipt-refund', 'phone');
      await page.getByRole('button', { name: 'Send the refund from my wallet' }).click();
      await page.locator('#receipt-status[data-status="refunded"]').waitFor({ timeout: 60_000 });
      await page.reload();
      expect(await page.locator('#receipt-status').textContent()).toBe('Refunded');
      expect(await page.locator('#refunds').textContent()).toContain('Refunded in full.');
      await shot(page, 'ops-flow-9-receipt-refunded', 'phone');

      // A second key; the first revoked: the order's receipt says a revoked key signs it; the roll moves it.
      await visit(page, '/console/api-keys', 'API keys');
      await page.getByRole('button', { name: 'Create key' }).click();
      await page.locator('#key-reveal').waitFor({ state: 'visible' });
      const secondKey = await page.locator('#key-value').inputValue();
      await page.getByRole('button', { name: 'I have saved it' }).click();
      await page.locator('#flash', { hasText: 'created' }).waitFor();
      await page.getByRole('button', { name: `Revoke key ${apiKey.slice(0, 8)}…` }).click();
      await page.locator('#revoke-dialog').getByRole('button', { name: 'Revoke key' }).click();
      await page.locator('#flash', { hasText: 'Key revoked' }).waitFor();
      await visit(page, `/console/receipts?id=${encodeURIComponent(orderId)}`, 'Receipts');
      expect(await page.locator('#revoked-signer').textContent()).toContain('Signed by a revoked key');
      await visit(page, '/console/api-keys', 'API keys');
      await shot(page, 'ops-flow-10-key-revoked', 'phone');
      await page.locator('form.roll-form').getByRole('button', { name: 'Roll receipts' }).click();
      await page.locator('#flash', { hasText: '1 receipt is now signed by the key you chose.' }).waitFor();
      await visit(page, `/console/receipts?id=${encodeURIComponent(orderId)}`, 'Receipts');
      expect(await page.locator('#revoked-signer').count()).toBe(0);
      expect(await page.locator('#deliveries').textContent()).toContain(`${secondKey.slice(0, 8)}…`);

      // A test webhook, signed by the shop's signing secret (the default), then by the key chosen, and the receiver's answer shown.
      await visit(page, '/console/webhooks', 'Webhooks');
      expect(await page.getByLabel('Receiver URL').inputValue()).toBe(receiver.url);
      const before = receiver.received.length;
      await page.getByRole('button', { name: 'Send test event' }).click();
      await page.locator('#webhook-outcome').waitFor({ state: 'visible' });
      expect(await page.locator('#webhook-outcome-notice').textContent()).toBe('Delivered: your receiver answered 2xx.');
      const bySecret = (await receiver.waitFor(before + 1)).at(-1)!;
      expect(JSON.parse(bySecret.body)).toMatchObject({ receiptId: 'R-TEST-EVENT', merchantWallet: merchant.account });
      expect(verifyWebhook({ body: bySecret.body, headers: bySecret.headers, secret: webhookSecret }).ok).toBe(true);
      await page.getByLabel('Sign with').selectOption({ label: (await page.locator('#f-keyId option', { hasText: secondKey.slice(0, 8) }).textContent())! });
      await page.getByRole('button', { name: 'Send test event' }).click();
      const sent = (await receiver.waitFor(before + 2)).at(-1)!;
      await page.locator('#outcome-key', { hasText: secondKey.slice(0, 8) }).waitFor();
      expect(verifyWebhook({ body: sent.body, headers: sent.headers, secret: secondKey }).ok).toBe(true);
      await shot(page, 'ops-flow-11-webhook-sent', 'phone');

      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 240_000);

  it('lays every operations page out at 360 px and 1280 px with labelled controls and visible focus', async () => {
    const merchant = await newMerchant();
    for (const [name, viewport] of [['phone', phone], ['desktop', desktop]] as const) {
      const { context, page, problems } = await openAs(merchant, viewport);
      try {
        await page.goto(`${stack.baseUrl}/console/receipts`);
        await signIn(page);
        if (name === 'phone') {
          expect((await fromPage(page, 'POST', '/api/split/deploy')).status).toBe(200);
          expect((await fromPage(page, 'POST', '/api/keys', { scopes: ['receipts:write'] })).status).toBe(201);
          expect((await fromPage(page, 'POST', '/api/console/receipts/terminal', { amountUsd: 3 })).status).toBe(201);
        }
        for (const [slug, heading] of [['api-keys', 'API keys'], ['receipts', 'Receipts'], ['terminal', 'Terminal'], ['webhooks', 'Webhooks']] as const) {
          await visit(page, `/console/${slug}`, heading);
          expect(await fitsWidth(page), `${slug} at ${viewport.width} px`).toEqual([]);
          expect(await unlabelled(page), `${slug}: controls without a name`).toEqual([]);
          // The keyboard reaches the page's first control, and its focus ring shows.
          await page.locator('main').focus();
          await page.keyboard.press('Tab');
          const outline = await page.evaluate('document.activeElement && document.activeElement !== document.body ? getComputedStyle(document.activeElement).outlineStyle : "none"');
          expect(outline, `${slug}: the focused control shows a ring`).not.toBe('none');
          await shot(page, `ops-${slug}`, name);
        }
        const first = page.locator('.receipts-table tbody tr a').first();
        await page.goto(`${stack.baseUrl}/console/receipts`);
        await first.click();
        await page.locator('#summary').waitFor();
        expect(await fitsWidth(page), `a receipt at ${viewport.width} px`).toEqual([]);
        await shot(page, 'ops-receipt', name);
        expect(problems).toEqual([]);
      } finally {
        await context.close();
      }
    }
  }, 180_000);
});
