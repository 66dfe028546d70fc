/**
 * The merchant console in a real browser (headless Chromium driven by playwright-core) against
 * `npm start` in a data folder of its own, with the test wallet injected into the page
 * (test/support/browser.ts). The merchants are new wallets of this run: they sign their sign-in
 * messages here, and anvil sends their transactions (it impersonates them, funded with test ETH),
 * so no anvil account another test uses is touched.
 *
 * Every page is photographed at 360 px and at 1280 px wide into test-results/admin/.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Interface, Wallet } from 'ethers';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { impersonatedWallet, launchBrowser, openPage, photographer, rpc, signInToConsole, type OpenedPage } from '../support/browser';
import { root, stackEnv, startStack, stopStack, type StartedStack } from '../support/stack';

const dataDir = mkdtempSync(join(tmpdir(), 'admin-browser-'));
const env = stackEnv(dataDir);
const shots = join(root, 'test-results', 'admin');
const phone = { width: 360, height: 780 };
const desktop = { width: 1280, height: 900 };
const photograph = photographer(shots);

/** A screenshot of the whole page, once it is shown that nothing makes it wider than the screen. */
const shot = async (page: Page, scenario: string, step: 'phone' | 'desktop') => {
  const width = page.viewportSize()!.width;
  const overflowing = await page.evaluate(
    `[...document.querySelectorAll('body *')].filter((element) => element.getBoundingClientRect().right > ${width} + 1 && !element.closest('.table-wrap, .nav')).map((element) => element.tagName + '#' + element.id + '.' + element.className).slice(0, 5)`,
  );
  expect(overflowing, `${scenario} at ${width}px`).toEqual([]);
  expect(await page.evaluate('document.documentElement.scrollWidth'), `${scenario} at ${width}px`).toBeLessThanOrEqual(width);
  // Every control has a name a screen reader says: a label, or aria-label; every button its text.
  const unnamed = await page.evaluate(
    `[...document.querySelectorAll('input:not([type=hidden]), select, textarea, button')].filter((control) => !(control.labels && control.labels.length > 0) && !control.getAttribute('aria-label') && !control.getAttribute('aria-labelledby') && !(control.tagName === 'BUTTON' && control.textContent.trim())).map((control) => control.outerHTML.slice(0, 120))`,
  );
  expect(unnamed, `${scenario}: controls without a name`).toEqual([]);
  await photograph(page, scenario, step);
};

let stack: StartedStack;
let browser: Browser;
let rpcUrl: string;
let usdc: string;
let buyer: string;

beforeAll(async () => {
  mkdirSync(shots, { recursive: true });
  stack = await startStack(env);
  const credentials = JSON.parse(readFileSync(join(dataDir, 'local-credentials.json'), 'utf8')) as { rpcUrl: string; tokens: { USDC: string }; buyers: string[] };
  rpcUrl = credentials.rpcUrl;
  usdc = credentials.tokens.USDC;
  buyer = credentials.buyers[0]!;
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  if (stack && stack.child.exitCode === null) await stopStack(stack);
  rmSync(dataDir, { recursive: true, force: true });
}, 60_000);

const newMerchant = () => impersonatedWallet(rpcUrl);

type Merchant = Awaited<ReturnType<typeof newMerchant>>;

const waitForMined = async (hash: string) => {
  for (let tries = 0; tries < 100; tries++) {
    const receipt = await rpc<{ status: string } | null>(rpcUrl, 'eth_getTransactionReceipt', [hash]);
    if (receipt) return receipt;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${hash} was not mined`);
};

const openAs = (merchant: Merchant | undefined, viewport = phone): Promise<OpenedPage> => openPage(browser, rpcUrl, viewport, merchant && { account: merchant.account, privateKey: merchant.privateKey });

const signIn = signInToConsole;

describe('the merchant console in a browser', () => {
  it('shows the sign-in page without a session, signs a new wallet in and out', async () => {
    const merchant = await newMerchant();
    const { context, page, problems } = await openAs(merchant);
    try {
      await page.goto(`${stack.baseUrl}/console/inventory`);
      expect(await page.locator('h1').textContent()).toBe('Sign in to your shop');
      await page.getByRole('button', { name: 'Sign in with Test Wallet' }).waitFor();
      await shot(page, 'signin', 'phone');
      // The first Tab reaches the skip link, which is visible when focused.
      await page.keyboard.press('Tab');
      expect(await page.evaluate('document.activeElement.textContent')).toBe('Skip to content');
      expect(await page.locator('.skip-link').evaluate((link) => link.getBoundingClientRect().top >= 0)).toBe(true);
      // By keyboard: the sign-in button takes Enter; the wallet is asked for its account and a signature.
      await page.getByRole('button', { name: 'Sign in with Test Wallet' }).focus();
      await page.keyboard.press('Enter');
      await page.locator('#sign-out').waitFor({ timeout: 20_000 });
      expect(await page.locator('main h1').textContent()).toBe('Inventory');
      expect(await page.locator('.nav [aria-current="page"]').textContent()).toBe('Inventory');
      expect(await page.locator('.account-wallet').getAttribute('title')).toBe(merchant.account);
      await page.locator('#sign-out').click();
      await page.locator('h1', { hasText: 'Sign in to your shop' }).waitFor();
      // Signed out for good: the pages show the sign-in page again.
      await page.goto(`${stack.baseUrl}/console/split`);
      expect(await page.locator('h1').textContent()).toBe('Sign in to your shop');
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 90_000);

  it('shows the sign-in page on a desktop too', async () => {
    const { context, page, problems } = await openAs(await newMerchant(), desktop);
    try {
      await page.goto(`${stack.baseUrl}/console`);
      await page.getByRole('button', { name: 'Sign in with Test Wallet' }).waitFor();
      await shot(page, 'signin', 'desktop');
      await signIn(page);
      expect(await page.locator('main h1').textContent()).toBe('Overview');
      await shot(page, 'overview', 'desktop');
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 90_000);

  it('a new merchant deploys its split from its wallet, adds items (a bad one first), sets tax and fee, distributes; another wallet sees none of it', async () => {
    const merchant = await newMerchant();
    const { context, page, problems } = await openAs(merchant);
    try {
      await page.goto(`${stack.baseUrl}/console`);
      await signIn(page);
      expect(await page.locator('#setup').innerText()).toContain('Deploy your split');
      await shot(page, 'overview-new', 'phone');
      await page.locator('#setup').getByRole('link', { name: 'Deploy your split' }).click();

      // The split: today's payees, deployed by the merchant's own wallet, recorded by the service.
      expect(await page.locator('main h1').textContent()).toBe('Split');
      expect(await page.locator('.payees tbody tr').count()).toBe(2);
      expect(await page.locator('.payees tbody tr').first().innerText()).toContain(merchant.account);
      await shot(page, 'split-undeployed', 'phone');
      await page.getByRole('button', { name: 'Deploy from my wallet' }).click();
      await page.locator('#split-address').waitFor({ timeout: 45_000 });
      const split = (await page.locator('#split-address').textContent())!;
      expect(await page.locator('#flash').textContent()).toBe(`Your split is deployed at ${split}.`);
      expect(await rpc<string>(rpcUrl, 'eth_getCode', [split, 'latest'])).not.toBe('0x');
      // The service recorded the split the merchant's wallet created: its deployment is the merchant's transaction.
      const deployment = (await page.locator('.facts a, .facts .mono[title]').last().getAttribute('title')) ?? '';
      const tx = await rpc<{ from: string }>(rpcUrl, 'eth_getTransactionByHash', [deployment]);
      expect(tx.from.toLowerCase()).toBe(merchant.account);
      await shot(page, 'split', 'phone');

      // A payment lands in the split (a plain USDC transfer from a funded test account); "distribute now" from the wallet.
      const transfer = new Interface(['function transfer(address to, uint256 amount)']).encodeFunctionData('transfer', [split, 5_000_000n]);
      const sent = await rpc<string>(rpcUrl, 'eth_sendTransaction', [{ from: buyer, to: usdc, data: transfer }]);
      await waitForMined(sent);
      await page.reload();
      await page.getByRole('button', { name: 'Distribute USDC now' }).click();
      await page.locator('#flash', { hasText: 'Distributed the split’s USDC.' }).waitFor({ timeout: 45_000 });
      expect(await page.getByRole('button', { name: 'Distribute USDC now' }).count()).toBe(0);
      // A plain transfer to the split pays no receipt: listed as unattributed.
      expect(await page.locator('#transactions tbody').innerText()).toMatch(/Into the split\s+Unattributed\s+5 USDC[\s\S]*Distributed/);
      await shot(page, 'split-distributed', 'phone');

      // Inventory: a bad price first, shown next to its field from the API's answer; then three items.
      await page.getByRole('link', { name: 'Inventory' }).click();
      await page.getByRole('textbox', { name: 'SKU', exact: true }).fill('TEA-01');
      await page.getByRole('textbox', { name: 'Name', exact: true }).fill('Green tea');
      await page.getByRole('textbox', { name: 'Price (USD)', exact: true }).fill('-5');
      await page.getByRole('button', { name: 'Add item' }).click();
      const priceError = page.locator('#f-priceUsd-error');
      await priceError.waitFor({ state: 'visible' });
      expect(await priceError.textContent()).toBe('must not be negative');
      expect(await page.getByRole('textbox', { name: 'Price (USD)', exact: true }).getAttribute('aria-invalid')).toBe('true');
      expect(await page.evaluate('document.activeElement.id')).toBe('f-priceUsd');
      await shot(page, 'inventory-error', 'phone');
      await page.getByRole('textbox', { name: 'Price (USD)', exact: true }).fill('4.50');
      await page.getByRole('button', { name: 'Add item' }).click();
      await page.locator('#flash', { hasText: 'Added TEA-01.' }).waitFor();
      for (const [sku, name, price] of [
        ['TEA-02', 'Black tea', '5'],
        ['MUG-01', 'Tea mug', '12.00'],
      ]) {
        await page.getByRole('textbox', { name: 'SKU', exact: true }).fill(sku!);
        await page.getByRole('textbox', { name: 'Name', exact: true }).fill(name!);
        await page.getByRole('textbox', { name: 'Price (USD)', exact: true }).fill(price!);
        // Enter submits, as in any form.
        await page.getByRole('textbox', { name: 'Price (USD)', exact: true }).press('Enter');
        await page.locator('#flash', { hasText: `Added ${sku}.` }).waitFor();
      }
      expect(await page.locator('tbody [data-label="SKU"]').allTextContents()).toEqual(['MUG-01', 'TEA-02', 'TEA-01']);
      await page.getByLabel('Search', { exact: true }).fill('tea');
      await page.getByRole('button', { name: 'Search' }).click();
      await page.waitForURL(/q=tea/);
      expect(await page.locator('tbody [data-label="SKU"]').allTextContents()).toEqual(['MUG-01', 'TEA-02', 'TEA-01']);
      await page.getByLabel('Search', { exact: true }).fill('black');
      await page.getByLabel('Search', { exact: true }).press('Enter');
      await page.waitForURL(/q=black/);
      expect(await page.locator('tbody [data-label="SKU"]').allTextContents()).toEqual(['TEA-02']);
      await shot(page, 'inventory', 'phone');

      // Settings: tax from the catalog as the default, and a fee whose worked example follows the typing.
      await page.getByRole('link', { name: 'Settings' }).click();
      await page.locator('#tax-catalog').selectOption('US-CA');
      await page.getByRole('button', { name: 'Add rate' }).click();
      expect(await page.evaluate('document.activeElement.name')).toBe('taxDefaults.jurisdictions.0.rate');
      await page.getByLabel('Default jurisdiction').selectOption('US-CA');
      await page.getByRole('button', { name: 'Save tax' }).click();
      await page.locator('#flash', { hasText: 'Saved the tax.' }).waitFor();
      expect(await page.locator('#tax-rows tr').count()).toBe(1);
      await page.getByLabel('Processing fee (%)').fill('2.5');
      await page.locator('#fee-example-table', { hasText: /Tax \(7\.25 % · US-CA\)\s*\$7\.25/ }).waitFor();
      expect(await page.locator('#fee-example-table').innerText()).toMatch(/Processing Fee\s+\$3\.79[\s\S]*The buyer pays\s+\$111\.04/);
      await page.getByRole('button', { name: 'Save fee' }).click();
      await page.locator('#flash', { hasText: 'Saved the processing fee.' }).waitFor();
      expect(await page.getByLabel('Processing fee (%)').inputValue()).toBe('2.5');
      // The branding preview follows the colour chosen, through the CSSOM (no inline style in the markup).
      await page.getByLabel('Shop name').fill('Leaf & Cup');
      await page.getByLabel('Main colour (pay button)').fill('#7c2d12');
      expect(await page.locator('#preview-name').textContent()).toBe('Leaf & Cup');
      expect(await page.locator('#brand-preview').evaluate((element) => element.ownerDocument.defaultView!.getComputedStyle(element).getPropertyValue('--brand').trim())).toBe('#7c2d12');
      await page.getByRole('button', { name: 'Save branding' }).click();
      await page.locator('#flash', { hasText: 'Saved the branding.' }).waitFor();
      // The first webhook URL makes the shop's signing secret: shown once, then named by its prefix only.
      await page.getByLabel('Default webhook URL').fill('http://localhost:9/hooks');
      await page.getByRole('button', { name: 'Save webhook' }).click();
      await page.locator('#secret-reveal').waitFor({ state: 'visible' });
      const secret = await page.locator('#secret-value').inputValue();
      expect(secret).toMatch(/^whsec_[a-z2-7]{52}$/);
      expect(await page.evaluate('document.activeElement.id')).toBe('secret-value');
      await shot(page, 'settings-secret-made', 'phone');
      await page.getByRole('button', { name: 'I have saved it' }).click();
      await page.locator('#flash', { hasText: 'Signing secret saved.' }).waitFor();
      expect(await page.locator('#signing-secret-facts').innerText()).toContain(`${secret.slice(0, 10)}…`);
      expect(await page.content()).not.toContain(secret);
      // A rotation asks first, shows the new secret once, and lists the old one while it still signs.
      await page.getByRole('button', { name: 'Rotate the secret' }).click();
      await page.locator('#rotate-dialog').getByRole('button', { name: 'Rotate' }).click();
      await page.locator('#secret-reveal').waitFor({ state: 'visible' });
      const rotated = await page.locator('#secret-value').inputValue();
      expect(rotated).not.toBe(secret);
      await shot(page, 'settings-secret-rotated', 'phone');
      await page.getByRole('button', { name: 'I have saved it' }).click();
      await page.locator('#flash', { hasText: 'Signing secret saved.' }).waitFor();
      expect(await page.locator('#signing-secret-facts').innerText()).toMatch(new RegExp(`${rotated.slice(0, 10)}…[\\s\\S]*Previous secret\\s+${secret.slice(0, 10)}… still signs beside it until`));
      await shot(page, 'settings', 'phone');

      // The overview: set up, with the split's holdings.
      await page.getByRole('link', { name: 'Overview' }).click();
      expect(await page.locator('#setup').count()).toBe(0);
      expect(await page.locator('#holdings-table').innerText()).toContain('USDC');
      await shot(page, 'overview', 'phone');
      // Only the failed write's 400 reached the console.
      expect(problems.filter((problem) => !/status of 400/.test(problem))).toEqual([]);
      expect(problems.filter((problem) => /status of 400/.test(problem))).toHaveLength(1);

      // The same pages on a desktop.
      const wide = await openAs(merchant, desktop);
      try {
        await wide.page.goto(`${stack.baseUrl}/console`);
        await signIn(wide.page);
        for (const [slug, name] of [['', 'overview'], ['split', 'split'], ['inventory', 'inventory'], ['settings', 'settings'], ['inventory?edit=', 'inventory-edit']] as const) {
          if (name === 'inventory-edit') {
            await wide.page.goto(`${stack.baseUrl}/console/inventory`);
            await wide.page.getByRole('link', { name: 'Edit TEA-01' }).click();
            expect(await wide.page.getByRole('textbox', { name: 'Price (USD)', exact: true }).inputValue()).toBe('4.5');
          } else {
            await wide.page.goto(`${stack.baseUrl}/console/${slug}`);
          }
          await shot(wide.page, name, 'desktop');
        }
        expect(wide.problems).toEqual([]);
      } finally {
        await wide.context.close();
      }

      // Another new wallet: none of the first one's items, split or settings.
      const other = await openAs(await newMerchant(), phone);
      try {
        await other.page.goto(`${stack.baseUrl}/console/inventory`);
        await signIn(other.page);
        expect(await other.page.locator('main').innerText()).toContain('No items yet');
        await other.page.getByRole('textbox', { name: 'SKU', exact: true }).fill('OTHER-1');
        await other.page.getByRole('textbox', { name: 'Name', exact: true }).fill('Someone else’s item');
        await other.page.getByRole('textbox', { name: 'Price (USD)', exact: true }).fill('1');
        await other.page.getByRole('button', { name: 'Add item' }).click();
        await other.page.locator('#flash', { hasText: 'Added OTHER-1.' }).waitFor();
        expect(await other.page.locator('tbody [data-label="SKU"]').allTextContents()).toEqual(['OTHER-1']);
        // Deleting asks first: Escape keeps the item, the dialog's Delete removes it.
        await other.page.getByRole('button', { name: 'Delete OTHER-1' }).click();
        const dialog = other.page.getByRole('dialog', { name: 'Delete this item?' });
        await dialog.waitFor();
        await shot(other.page, 'inventory-delete', 'phone');
        await other.page.keyboard.press('Escape');
        await dialog.waitFor({ state: 'hidden' });
        expect(await other.page.evaluate('document.activeElement.getAttribute("aria-label")')).toBe('Delete OTHER-1');
        await other.page.keyboard.press('Enter');
        await dialog.getByRole('button', { name: 'Delete', exact: true }).click();
        await other.page.locator('#flash', { hasText: 'Deleted OTHER-1.' }).waitFor();
        expect(await other.page.locator('tbody [data-label="SKU"]').count()).toBe(0);
        await other.page.goto(`${stack.baseUrl}/console/split`);
        expect(await other.page.getByRole('button', { name: 'Deploy from my wallet' }).count()).toBe(1);
        await other.page.goto(`${stack.baseUrl}/console/settings`);
        expect(await other.page.getByLabel('Processing fee (%)').inputValue()).toBe('0');
        expect(await other.page.locator('#tax-rows tr').count()).toBe(0);
        expect(other.problems).toEqual([]);
      } finally {
        await other.context.close();
      }
      await page.goto(`${stack.baseUrl}/console/inventory`);
      expect(await page.locator('tbody [data-label="SKU"]').allTextContents()).toEqual(['MUG-01', 'TEA-02', 'TEA-01']);
    } finally {
      await context.close();
    }
  }, 240_000);
});
