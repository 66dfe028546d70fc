/**
 * The buyer's payment page in a real browser (headless Chromium driven by playwright-core) against
 * `npm start` in a data folder of its own, with a wallet injected into the page: an EIP-1193
 * provider, announced by EIP-6963 too, that forwards its calls to the stack's anvil, where the
 * funded buyer accounts are unlocked (so `eth_sendTransaction` is signed by the node). The stack runs
 * its own anvil rather than the run's: other test files move the shared chain's feed and accounts.
 *
 * Every step is photographed into test-results/portal/<scenario>-<step>.png, on a phone-sized
 * viewport and on a desktop one.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import { parseUnits, verifyTypedData, type TypedDataDomain, type TypedDataField } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANVIL_ACCOUNTS } from '../../scripts/local/anvil';
import type { QuoteView } from '../../shared/domain/portal-views';
import { paymentTransaction, toQuantity, transferCalldata, type TransactionRequest } from '../../web/portal/wallet-calls';
import { launchBrowser, openPage as openBrowserPage, photographer, rpc, type WalletOptions } from '../support/browser';
import { call, root, stackEnv, startStack, stopStack, tsx, type StartedStack } from '../support/stack';

const dataDir = mkdtempSync(join(tmpdir(), 'portal-browser-'));
// Every scenario's buyer calls from this one address, where in life each has its own: the gateway's
// per-address limit is raised so that scenarios run in the same minute do not share one budget.
const env = stackEnv(dataDir, { KEYLESS_RATE_LIMIT_PER_MINUTE: '2000' });
const shots = join(root, 'test-results', 'portal');
const phone = { width: 390, height: 844 };
/** The narrowest phones in use: the page must work there without sideways scrolling. */
const narrow = { width: 360, height: 740 };
const desktop = { width: 1280, height: 900 };

let stack: StartedStack;
let browser: Browser;
let rpcUrl: string;
let buyers: string[];

beforeAll(async () => {
  mkdirSync(shots, { recursive: true });
  stack = await startStack(env);
  const credentials = JSON.parse(readFileSync(join(dataDir, 'local-credentials.json'), 'utf8')) as { rpcUrl: string; buyers: string[] };
  rpcUrl = credentials.rpcUrl;
  buyers = credentials.buyers;
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  if (stack && stack.child.exitCode === null) await stopStack(stack);
  rmSync(dataDir, { recursive: true, force: true });
}, 60_000);

/** An order of the demo shop's inventory: a `generated` receipt with Tax and Processing Fee lines. */
const newOrder = async () => {
  const answer = await call(stack.baseUrl, '/api/orders', { method: 'POST', key: stack.apiKey, body: { items: [{ sku: 'MUG-CERAMIC', qty: 2 }, { sku: 'GIFT-CARD-25', qty: 1 }] } });
  expect(answer.status).toBe(200);
  return (answer.json.receipt as { receiptId: string }).receiptId;
};

const ethBalance = async (address: string) => {
  const response = await fetch(rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_getBalance', params: [address, 'latest'] }) });
  return BigInt(((await response.json()) as { result: string }).result);
};

const receiptStatus = async (id: string) =>
  (await call(stack.baseUrl, `/api/receipts/${encodeURIComponent(id)}`, { key: stack.apiKey })).json as { status: string; transactionHash: string | null; token: string | null; buyerWallet: string | null; amountPaid: string | null };

const openPage = (viewport: { width: number; height: number }, wallet?: WalletOptions) => openBrowserPage(browser, rpcUrl, viewport, wallet);

const shot = photographer(shots);

/** Waits until the quote for a token is shown (its amount in the pay button). */
const quoted = async (page: Page, token: string) => {
  await page.locator('#quote-amount').filter({ hasText: new RegExp(`\\d ${token}$`) }).waitFor();
  await page.locator('#qr-image:not([hidden])').waitFor({ state: 'attached' });
};

/** Presses Tab until the focus is on an element matching `selector`: the keyboard's own way there. */
const tabTo = async (page: Page, selector: string) => {
  for (let presses = 0; presses < 40; presses++) {
    await page.keyboard.press('Tab');
    if (await page.evaluate(`Boolean(document.activeElement && document.activeElement.matches(${JSON.stringify(selector)}))`)) return;
  }
  throw new Error(`Tab never reached ${selector}`);
};

/**
 * Every control on screen that could start a payment: visible and enabled buttons, inputs, summaries
 * and links, but for the receipt's own links (its transaction, its proof, the page's address).
 */
const payControls = (page: Page) =>
  page.evaluate(`[...document.querySelectorAll('button, input, select, textarea, summary, [role=button], [tabindex]:not([tabindex="-1"]), a[href]')]
    .filter((element) => element.checkVisibility() && !element.disabled && !element.matches('a.tx-link, a.proof-link, .footnote a'))
    .map((element) => element.outerHTML.slice(0, 100))`) as Promise<string[]>;

/** The page's open quote, as the service holds it. */
const openQuote = async (id: string) => (await call(stack.baseUrl, `/api/portal/${encodeURIComponent(id)}`)).json.quote as QuoteView;

/**
 * Where the buyer's money must go: the receipt's own deposit address (the receipts API), never the
 * shop's split (the split API), which only the deposit address sends on to.
 */
const payees = async (id: string) => {
  const receipt = (await call(stack.baseUrl, `/api/receipts/${encodeURIComponent(id)}`, { key: stack.apiKey })).json as { depositAddress: string | null };
  const split = ((await call(stack.baseUrl, '/api/split/deploy', { key: stack.apiKey })).json.split as { address: string }).address.toLowerCase();
  expect(receipt.depositAddress).toMatch(/^0x[0-9a-f]{40}$/);
  expect(receipt.depositAddress).not.toBe(split);
  return { deposit: receipt.depositAddress!, split };
};

/** The transactions the page asked the wallet to send, as it asked them. */
const walletSent = (page: Page) => page.evaluate('window.__walletSent') as Promise<TransactionRequest[]>;

const connect = async (page: Page) => {
  await page.getByRole('button', { name: 'Connect Test Wallet' }).click();
  await page.locator('#wallet-state').filter({ hasText: 'Connected: Test Wallet' }).waitFor();
};

describe('the payment page in a browser', () => {
  it('pays in USDC by keyboard alone on a 360 px phone: quote, connect, pay, the success screen, and the receipt is paid', async () => {
    const id = await newOrder();
    const { context, page, problems } = await openPage(narrow, { account: buyers[0]! });
    try {
      await page.goto(`${stack.baseUrl}/pay/${id}`);
      expect(await page.locator('h1.shop-name').textContent()).toBe('Demo Coffee Roasters');
      await quoted(page, 'USDC');
      // The buyer is asked for exactly the receipt's customer total: its cents, no digit more (no tag, no rounding).
      const view = (await call(stack.baseUrl, `/api/portal/${encodeURIComponent(id)}`)).json as { customerTotalUsd: number; quote: QuoteView };
      const quote = view.quote;
      expect(quote).toMatchObject({ token: 'USDC', decimals: 6 });
      expect(quote.amount).toBe(String(Math.round(view.customerTotalUsd * 100) * 10_000));
      const due = (await page.locator('#quote-amount').textContent())!;
      expect(due).toMatch(/^\d+(\.\d{1,2})? USDC$/);
      expect(Number(due.split(' ')[0])).toBe(view.customerTotalUsd);
      expect(await page.locator('[data-amount-for="USDC"]').textContent()).toBe(due);
      const { deposit } = await payees(id);
      expect(quote.payTo).toBe(deposit);
      await page.getByRole('button', { name: 'Connect Test Wallet' }).waitFor();
      // Nothing wider than the screen: no sideways scrolling.
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(narrow.width);
      await shot(page, 'usdc', '1-opened');
      // Keys only: Tab to the wallet, Enter connects and moves the focus to the pay button, which Enter presses.
      await tabTo(page, '#wallet-list button');
      await page.keyboard.press('Enter');
      await page.locator('#wallet-state').filter({ hasText: 'Connected: Test Wallet' }).waitFor();
      const pay = page.locator('#pay-button');
      expect(await pay.textContent()).toBe(`Pay ${due}`);
      expect(await pay.isEnabled()).toBe(true);
      expect(await page.evaluate('document.activeElement.id')).toBe('pay-button');
      await shot(page, 'usdc', '2-connected');
      await page.keyboard.press('Enter');
      await page.locator('#success').waitFor({ state: 'visible', timeout: 30_000 });
      await shot(page, 'usdc', '3-paid');
      // The wallet was asked for a transfer of exactly the quote, by the token's contract, to the receipt's deposit address.
      expect(await walletSent(page)).toEqual([{ from: buyers[0], to: quote.tokenAddress, data: transferCalldata(deposit, quote.amount) }]);
      expect(await page.locator('#success-text').textContent()).toBe(`Thank you. Demo Coffee Roasters received ${due}.`);
      expect(await page.locator('#status-badge').textContent()).toBe('Paid');
      expect(await page.evaluate('document.activeElement && document.activeElement.id')).toBe('success');
      expect(await payControls(page)).toEqual([]);
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(narrow.width);
      const receipt = await receiptStatus(id);
      expect(receipt).toMatchObject({ status: 'paid', token: 'USDC', buyerWallet: buyers[0], amountPaid: quote.amount });
      expect(await page.locator('#success-tx').textContent()).toContain(receipt.transactionHash);
      // Reloaded, the page says paid on its own (server-rendered), with no payment form.
      await page.reload();
      expect(await page.locator('#state h2').textContent()).toBe('Payment received');
      expect(await page.locator('#pay-form').count()).toBe(0);
      await shot(page, 'usdc', '4-reloaded');
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 90_000);

  it('pays in ETH by keyboard alone on a desktop, shown to at most 6 decimals while the wallet sends the exact amount', async () => {
    const id = await newOrder();
    const { context, page, problems } = await openPage(desktop, { account: buyers[1]! });
    try {
      await page.goto(`${stack.baseUrl}/portal/${id}`);
      await quoted(page, 'USDC');
      // The token choice is a radio group: Tab reaches it, arrow keys move through it.
      await tabTo(page, 'input[name="token"]:checked');
      await page.keyboard.press('ArrowDown');
      await page.keyboard.press('ArrowDown');
      expect(await page.getByLabel('ETH').isChecked()).toBe(true);
      await quoted(page, 'ETH');
      const quote = await openQuote(id);
      expect(quote).toMatchObject({ token: 'ETH', decimals: 18 });
      const shown = (await page.locator('#quote-amount').textContent())!;
      expect(shown).toMatch(/^0\.\d{1,6} ETH$/);
      expect(await page.locator('[data-amount-for="ETH"]').textContent()).toBe(shown);
      // At most a millionth of an ETH above the exact quote, never below it: sending what the page says pays it all.
      const over = parseUnits(shown.split(' ')[0]!, 18) - BigInt(quote.amount);
      expect(over >= 0n && over < 10n ** 12n).toBe(true);
      const { deposit } = await payees(id);
      expect(quote.payTo).toBe(deposit);
      await tabTo(page, 'details#qr-details summary');
      await page.keyboard.press('Enter');
      expect(await page.locator('details#qr-details').getAttribute('open')).not.toBeNull();
      await tabTo(page, '#wallet-list button');
      await page.keyboard.press('Enter');
      await page.locator('#wallet-state').filter({ hasText: 'Connected: Test Wallet' }).waitFor();
      expect(await page.evaluate('document.activeElement.id')).toBe('pay-button');
      expect(await page.locator('#pay-button').textContent()).toMatch(/^Pay 0\.\d{1,6} ETH$/);
      await shot(page, 'eth', '1-connected');
      const before = await ethBalance(buyers[1]!);
      await page.keyboard.press('Enter');
      await page.locator('#success').waitFor({ state: 'visible', timeout: 30_000 });
      await shot(page, 'eth', '2-paid');
      // The wallet carried the exact wei, to the receipt's deposit address.
      expect(await walletSent(page)).toEqual([{ from: buyers[1], to: deposit, value: toQuantity(quote.amount) }]);
      // The exact quote went to the chain; the page showed it rounded.
      const receipt = (await call(stack.baseUrl, `/api/receipts/${encodeURIComponent(id)}`, { key: stack.apiKey })).json;
      expect(receipt).toMatchObject({ status: expect.stringMatching(/^(paid|reconciled)$/), token: 'ETH', amountPaid: quote.amount });
      // The figure the buyer was asked for, not one a wei away.
      expect(await page.locator('#success-text').textContent()).toBe(`Thank you. Demo Coffee Roasters received ${shown}.`);
      expect(await payControls(page)).toEqual([]);
      const after = await ethBalance(buyers[1]!);
      expect(after < before).toBe(true);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 90_000);

  it('keeps the keyboard on a wallet’s button when the wallet list is drawn again (a wallet announced late)', async () => {
    const id = await newOrder();
    const { context, page, problems } = await openPage(desktop, { account: buyers[2]! });
    try {
      await page.goto(`${stack.baseUrl}/portal/${id}`);
      await quoted(page, 'USDC');
      await page.locator('#wallet-list button').first().waitFor();
      // Past the page's wallet discovery: what redraws the list from here is the late announcement.
      await page.waitForTimeout(600);
      await tabTo(page, '#wallet-list button');
      const before = await page.evaluate('document.activeElement.dataset.wallet');
      await page.evaluate(`window.dispatchEvent(new CustomEvent('eip6963:announceProvider', { detail: { info: { uuid: 'late-wallet', name: 'Late Wallet', icon: '', rdns: 'example.late' }, provider: { request: async () => [] } } }))`);
      await page.locator('#wallet-list button', { hasText: 'Late Wallet' }).waitFor();
      expect(await page.evaluate('document.activeElement.dataset.wallet')).toBe(before);
      await page.keyboard.press('Enter');
      await page.locator('#wallet-state').filter({ hasText: 'Connected: Test Wallet' }).waitFor();
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 60_000);

  it('a receipt paid elsewhere while its page is open (a phone wallet, from the QR code) shows the success state and nothing that pays again', async () => {
    const id = await newOrder();
    const { context, page, problems } = await openPage(desktop, { account: buyers[2]! });
    try {
      await page.goto(`${stack.baseUrl}/pay/${id}`);
      await quoted(page, 'USDC');
      await page.getByRole('button', { name: 'Connect Test Wallet' }).waitFor();
      await page.getByRole('button', { name: 'Pay by card' }).waitFor();
      expect((await payControls(page)).length).toBeGreaterThan(0);
      await shot(page, 'paid-elsewhere', '1-opened');
      // The page's quote, paid on chain from another wallet: the service's watcher finds the transfer.
      const quote = await openQuote(id);
      expect(quote).toMatchObject({ token: 'USDC' });
      await rpc(rpcUrl, 'eth_sendTransaction', [paymentTransaction(quote, buyers[4]!)]);
      await page.locator('#success').waitFor({ state: 'visible', timeout: 30_000 });
      expect(await page.locator('#status-badge').textContent()).toBe('Paid');
      expect(await page.locator('#success-text').textContent()).toMatch(/^Thank you\. Demo Coffee Roasters received \d+\.\d+ USDC\.$/);
      expect(await payControls(page)).toEqual([]);
      await shot(page, 'paid-elsewhere', '2-paid');
      expect((await receiptStatus(id)).status).toMatch(/^(paid|reconciled)$/);
      // Later too: nothing comes back (no quote renewal, no wallet announcing itself again).
      await page.evaluate(`window.dispatchEvent(new Event('eip6963:requestProvider'))`);
      await page.waitForTimeout(1_500);
      expect(await payControls(page)).toEqual([]);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 90_000);

  it('shows a rejection in the wallet, reports it, and leaves the receipt payable', async () => {
    const id = await newOrder();
    const { context, page, problems } = await openPage(phone, { account: buyers[2]!, rejectSend: true });
    try {
      await page.goto(`${stack.baseUrl}/pay/${id}`);
      await quoted(page, 'USDC');
      await connect(page);
      await page.locator('#pay-button').click();
      await page.locator('#problem').waitFor({ state: 'visible' });
      expect(await page.locator('#problem-message').textContent()).toBe('You cancelled the request in your wallet.');
      expect(await page.locator('#problem').getAttribute('role')).toBe('alert');
      await page.locator('#pay-button:enabled').waitFor();
      await shot(page, 'reject', '1-rejected');
      expect(await page.evaluate('window.__walletCalls')).toContain('eth_sendTransaction');
      // The buyer may pay again: nothing failed, nothing was paid.
      const receipt = await receiptStatus(id);
      expect(['checkout_initialized', 'buyer_logged_in', 'link_opened']).toContain(receipt.status);
      const view = await call(stack.baseUrl, `/api/portal/${id}`);
      expect(view.json).toMatchObject({ payable: true, status: receipt.status });
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 90_000);

  it('after an underpayment shows what is left, and paying the rest makes the receipt paid; a wallet on another network is asked to switch', async () => {
    const id = await newOrder();
    const { context, page, problems } = await openPage(phone, { account: buyers[3]!, halveFirstTransfer: true, startOnChain: 1 });
    try {
      await page.goto(`${stack.baseUrl}/pay/${id}`);
      await page.getByLabel('USDT').check();
      await quoted(page, 'USDT');
      await connect(page);
      const full = /^Pay (\d+\.\d+) USDT$/.exec((await page.locator('#pay-button').textContent())!)![1]!;
      const quote = await openQuote(id);
      const { deposit } = await payees(id);
      await page.locator('#pay-button').click();
      await page.locator('#problem-message').filter({ hasText: 'Part of the payment arrived' }).waitFor({ timeout: 30_000 });
      // The page asked for the whole quote, to the receipt's deposit address (the wallet sent half of it).
      expect(await walletSent(page)).toEqual([{ from: buyers[3], to: quote.tokenAddress, data: transferCalldata(deposit, quote.amount) }]);
      expect(await page.evaluate('window.__walletCalls')).toEqual(expect.arrayContaining(['eth_chainId', 'wallet_switchEthereumChain', 'eth_sendTransaction']));
      const left = /^Send the remaining (\d+\.\d+) USDT to complete it\.$/.exec((await page.locator('#problem-action').textContent())!)![1]!;
      expect(Number(left)).toBeCloseTo(Number(full) / 2, 5);
      await page.locator('#pay-button:enabled').waitFor();
      expect(await page.locator('#pay-button').textContent()).toBe(`Pay ${left} USDT`);
      expect((await receiptStatus(id)).status).not.toBe('paid');
      await shot(page, 'underpaid', '1-half-received');
      // Reloaded, the page still knows: the server says what arrived, the script asks only for the rest.
      await page.reload();
      expect(await page.locator('#state').innerText()).toContain(`Send the remaining ${left} USDT to complete the payment.`);
      expect(await page.locator('#status-badge').textContent()).toBe('Partly paid');
      await quoted(page, 'USDT');
      await connect(page);
      expect(await page.locator('#pay-button').textContent()).toBe(`Pay ${left} USDT`);
      expect(await page.locator('#quote-amount').textContent()).toBe(`${left} USDT`);
      await shot(page, 'underpaid', '2-reloaded');
      await page.locator('#pay-button').click();
      await page.locator('#success').waitFor({ state: 'visible', timeout: 30_000 });
      // Then exactly what was left, to the same address.
      expect(await walletSent(page)).toEqual([{ from: buyers[3], to: quote.tokenAddress, data: transferCalldata(deposit, BigInt(quote.amount) - BigInt(quote.amount) / 2n) }]);
      await shot(page, 'underpaid', '3-paid');
      expect(await receiptStatus(id)).toMatchObject({ status: 'paid', token: 'USDT' });
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 90_000);

  it('shows everything a buyer needs without JavaScript: lines, total and the QR code', async () => {
    const id = await newOrder();
    const context = await browser.newContext({ viewport: phone, javaScriptEnabled: false });
    try {
      const page = await context.newPage();
      await page.goto(`${stack.baseUrl}/pay/${id}`);
      const text = (await page.locator('main').innerText()).replace(/\s+/g, ' ');
      expect(text).toMatch(/Ceramic mug 2 × \$12\.00 \$24\.00/);
      expect(text).toMatch(/Tax 7\.25 % · US-CA \$\d+\.\d{2}/);
      expect(text).toMatch(/Processing Fee \$\d+\.\d{2}/);
      expect(text).toContain('needs a browser wallet');
      const qr = page.locator('noscript img, img.qr-image').first();
      await qr.waitFor();
      expect(await qr.evaluate((image: { naturalWidth: number }) => image.naturalWidth)).toBeGreaterThan(0);
      await shot(page, 'noscript', '1-opened');
      await page.goto(`${stack.baseUrl}/pay/R-does-not-exist`);
      expect(await page.locator('h1').textContent()).toBe('We can’t find this payment');
      await shot(page, 'noscript', '2-not-found');
    } finally {
      await context.close();
    }
  }, 60_000);

  it('renders markup in the brand name and item names as text', async () => {
    const attack = `<img src=x onerror="alert('brand')"><script>alert('brand')</script>`;
    const { stdout } = await promisify(execFile)(tsx, ['scripts/admin.ts', 'login', '--private-key', ANVIL_ACCOUNTS[1].privateKey, '--base-url', stack.baseUrl], { cwd: root, env });
    const [cookie, csrf, origin] = ['Cookie', 'x-csrf-token', 'Origin'].map((name) => new RegExp(`^${name}: (.+)$`, 'm').exec(stdout)![1]!) as [string, string, string];
    const update = await fetch(`${stack.baseUrl}/api/shop/config`, {
      method: 'POST',
      headers: { cookie, 'x-csrf-token': csrf, origin, 'content-type': 'application/json' },
      body: JSON.stringify({ branding: { name: attack, colors: { primary: '#7c2d12', accent: '#0e9f6e', background: '#fff7ed' } } }),
    });
    expect(update.status).toBe(200);
    const item = `<svg onload="alert('item')"></svg>"><b>bold</b>`;
    const created = await call(stack.baseUrl, '/api/receipts', { method: 'POST', key: stack.apiKey, body: { id: `xss-${Date.now()}`, lineItems: [{ label: item, priceUsd: 5, qty: 1 }, { label: 'Plain', priceUsd: 1 }], totalUsd: 6 } });
    expect(created.status).toBe(201);
    const id = created.json.id as string;
    const { context, page, problems } = await openPage(phone, { account: buyers[4]! });
    try {
      await page.goto(`${stack.baseUrl}/pay/${id}`);
      await quoted(page, 'USDC');
      expect(await page.locator('h1.shop-name').textContent()).toBe(attack);
      expect(await page.locator('.lines .line-label').first().textContent()).toBe(item);
      expect(await page.locator('.lines b, .lines svg, main script, main img[src="x"]').count()).toBe(0);
      expect(await page.title()).toBe(`Pay ${attack} · ${id}`);
      // The shop's colours, applied by the script through the CSSOM (no inline style in the markup).
      expect(await page.evaluate("getComputedStyle(document.documentElement).getPropertyValue('--brand').trim()")).toBe('#7c2d12');
      await shot(page, 'xss', '1-opened');
      await page.waitForTimeout(300);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 90_000);
});

describe('paying by card in a browser, through the sandbox on-ramp', () => {
  it('chooses card on a phone, finishes in the sandbox checkout, and comes back to the success screen', async () => {
    const id = await newOrder();
    const { context, page, problems } = await openPage(phone);
    try {
      await page.goto(`${stack.baseUrl}/pay/${id}`);
      const card = page.getByRole('button', { name: 'Pay by card' });
      await card.waitFor();
      await shot(page, 'card', '1-opened');
      // By keyboard, as on the wallet path.
      await card.focus();
      await page.keyboard.press('Enter');
      await page.waitForURL(/\/onramp\/sandbox\/sbx_/);
      expect(await page.locator('h1').textContent()).toBe('Sandbox card checkout');
      expect(await page.getByLabel('Approve the card and deliver the USDC').isChecked()).toBe(true);
      await shot(page, 'card', '2-sandbox');
      await page.getByRole('button', { name: /^Pay \$\d+\.\d\d$/ }).click();
      await page.waitForURL(`${stack.baseUrl}/pay/${id}`);
      await page.locator('#state h2').filter({ hasText: 'Payment received' }).waitFor({ timeout: 30_000 });
      await shot(page, 'card', '3-paid');
      const receipt = (await call(stack.baseUrl, `/api/receipts/${encodeURIComponent(id)}`, { key: stack.apiKey })).json;
      expect(receipt).toMatchObject({ token: 'USDC', isOnrampSessionUnique: true });
      expect(receipt.status).toMatch(/^(paid|reconciled)$/);
      expect(receipt.onrampSessionId).toMatch(/^sbx_/);
      // "Download receipt": the signed proof of the card payment, by the service's published signer.
      const link = page.getByRole('link', { name: 'Download receipt' });
      expect(await link.getAttribute('download')).toBe(`receipt-${id}.json`);
      const proof = (await page.evaluate(async (href) => (await fetch(href)).json(), (await link.getAttribute('href'))!)) as {
        domain: TypedDataDomain;
        types: Record<string, TypedDataField[]>;
        message: Record<string, unknown>;
        signature: string;
      };
      const signer = ((await call(stack.baseUrl, '/.well-known/receipt-signer')).json as { address: string }).address;
      expect(verifyTypedData(proof.domain, proof.types, proof.message, proof.signature).toLowerCase()).toBe(signer.toLowerCase());
      expect(proof.message).toMatchObject({ receiptId: id, transactionHash: receipt.transactionHash });
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 90_000);

  it('a declined card shows its message, and the receipt is then paid by wallet on a desktop', async () => {
    const id = await newOrder();
    const { context, page, problems } = await openPage(desktop, { account: buyers[0]! });
    try {
      await page.goto(`${stack.baseUrl}/pay/${id}`);
      await page.getByRole('button', { name: 'Pay by card' }).click();
      await page.waitForURL(/\/onramp\/sandbox\/sbx_/);
      await page.getByLabel('Declined by the issuer').check();
      await shot(page, 'card-declined', '1-sandbox');
      await page.getByRole('button', { name: /^Pay \$/ }).click();
      await page.waitForURL(`${stack.baseUrl}/pay/${id}`);
      const state = page.locator('#state');
      expect(await state.locator('h2').textContent()).toBe('Payment failed');
      expect(await state.textContent()).toContain('Declined by the issuer');
      expect(await state.textContent()).toContain('You can try again below.');
      // Advice for the buyer, not the merchant's.
      expect(await state.textContent()).toContain('Try another card, or pay with crypto.');
      expect(await state.textContent()).not.toContain('Ask the buyer');
      await shot(page, 'card-declined', '2-declined');
      // The wallet still pays it.
      await quoted(page, 'USDC');
      await connect(page);
      await page.locator('#pay-button').click();
      await page.locator('#success').waitFor({ state: 'visible', timeout: 30_000 });
      await shot(page, 'card-declined', '3-paid-by-wallet');
      // Paid, and perhaps already paid out by the split's reconciliation (every 15 s).
      expect((await receiptStatus(id)).status).toMatch(/^(paid|reconciled)$/);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 90_000);
});
